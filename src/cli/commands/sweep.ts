import { terminalSafe } from '../../utils/terminal-text.js';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { EXIT_INTERRUPTED, EXIT_OK, EXIT_SWEEP_RUN_FAILED } from '../exit-codes.js';
import { readSettingsFile } from '../read-settings-file.js';
import { applyRealTimeV8Flags } from '../real-time-v8-flags.js';
import { addFlags, flagsToConfig, parseInteger } from '../options/option-table.js';
import { sweepSlurmFlags } from '../options/slurm-job-flags.js';

export function registerSweepCommand(program: Command): void {
  const command = program
    .command('sweep')
    .summary('run a grid of tests (rates, policies, server settings) and find the highest rate that meets SLOs')
    .description(
      [
        'Runs every combination of a grid of settings as its own test, then (with a search section) bisects the request ' +
          'rate for each combination of the other settings to find the highest that meets the objectives. A rate passes ' +
          'only when its run met them and its verdict is STABLE over a window long enough to judge; a probe that met them ' +
          'but was SATURATED or too short is run again with twice the prompts, up to maxNumPrompts (else: not judged). ' +
          'The answer is a range: the highest rate that passed, the lowest that failed. Writes ' +
          'sweep.csv (one row per run), search.csv, and compare.html / compare.csv lining every run up.',
        '',
        'Sweep file (YAML or JSON):',
        '  test: routing',
        '  settings: { numGpus: 4, numPrompts: 300, datasetName: shared-prefix }',
        '  grid:',
        '    routingPolicy: [cache_aware, round_robin]',
        '    requestRate: [10, 20, 40]',
        '  search:                       # optional',
        '    slo: { ttftMs: 500, tpotMs: 50 }',
        '    attainment: 0.9             # share of requests that must meet every objective',
        '    lowRate: 1',
        '    highRate: 100',
        '    steps: 5',
        '    maxNumPrompts: 1600         # longest probe run (default 8 x numPrompts)',
        '',
        'With repeats: N in settings (or in the grid), every grid point is run N times (runs/<label>/repeat-k/, seeds',
        'seed..seed+N-1) and sweep.csv gives its estimates over them with 95% intervals; a search section with repeats is',
        'refused (a probe is one run).',
      ].join('\n'),
    )
    .addHelpText(
      'after',
      [
        '',
        'Exit status:',
        `  ${EXIT_OK}    every run completed`,
        `  ${EXIT_SWEEP_RUN_FAILED}    the sweep finished but a run failed: stderr and sweep.csv's failure column say why; every run's files are kept`,
        '  1    the sweep could not run',
        '  2    the sweep file or a setting is invalid (nothing started)',
        `  ${EXIT_INTERRUPTED}  interrupted: what was measured is written`,
      ].join('\n'),
    )
    .argument('<file>', 'the sweep file')
    .option('--output-dir <dir>', 'where runs and tables go (default: results/sweep-<time>)')
    .option('--max-parallel <n>', 'with --launcher slurm from a login node: points submitted as jobs at once (default: the file\'s maxParallel, else 4)', parseInteger);
  // --launcher slurm from a login node: each point is its own batch job (docs/slurm.md); these join every point's settings.
  addFlags(command, sweepSlurmFlags);
  command.option('--dry-run', 'with --launcher slurm outside an allocation: print each grid point\'s batch script, and exit without submitting');
  command.action(async (file: string, options: { outputDir?: string; maxParallel?: number; dryRun?: boolean }) => {
      const parsed = await readSettingsFile(file, 'sweep file');
      const [{ parseSweepPlan, gridPoints }, { runSweep }, { searchAnswerLines, sweepRunsTable }, { abortOnSignals }] = await Promise.all([
        import('../../experiments/sweep/sweep-plan.js'),
        import('../../experiments/sweep/run-sweep.js'),
        import('../../experiments/sweep/sweep-text.js'),
        import('../interrupts.js'),
      ]);
      const plan = parseSweepPlan(parsed);
      Object.assign(plan.settings, flagsToConfig(command, sweepSlurmFlags));
      if (options.maxParallel !== undefined) plan.maxParallel = options.maxParallel;
      // Real-time runs in the grid get the V8 settings a single run gets (see real-time-v8-flags.ts).
      if (plan.settings['virtualTime'] !== true && !(plan.grid['virtualTime'] ?? []).includes(true)) applyRealTimeV8Flags();
      const outputDirectory = resolve(options.outputDir ?? `results/sweep-${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}`);
      if (options.dryRun === true) {
        const { printSweepJobScripts } = await import('../sweep-dry-run.js');
        process.exitCode = printSweepJobScripts(plan, outputDirectory);
        return;
      }
      // A search with no grid makes no grid run (run-sweep.ts), so every run it announces is a search probe.
      const gridSize = plan.search !== undefined && Object.keys(plan.grid).length === 0 ? 0 : gridPoints(plan.grid).length;
      const interrupts = abortOnSignals(() => process.stderr.write('servelab sweep: stopping after writing what was measured\n'));
      try {
        const result = await runSweep(plan, {
          outputDirectory,
          signal: interrupts.signal,
          onRunStart: (label, index) => process.stderr.write(`[run ${index + 1}${index < gridSize ? `/${gridSize}` : ' (search)'}] ${label}\n`),
        });
        // The answer first (what the sweep was run for), then one readable row per run; every metric is in compare.csv.
        if (plan.search !== undefined) {
          for (const line of searchAnswerLines(result.searches, plan.search)) process.stdout.write(`${terminalSafe(line)}\n`);
          process.stdout.write('\n');
        }
        if (result.runs.length > 0) process.stdout.write(`${terminalSafe(sweepRunsTable(result.runs))}(every metric of every run: compare.csv, compare.html)\n\n`);
        const failed = result.runs.filter((run) => run.failure !== undefined);
        for (const run of failed) process.stderr.write(`servelab sweep: run ${run.label} failed: ${run.failure}\n`);
        process.stdout.write(`${result.files.map((path) => `wrote ${path}`).join('\n')}\n`);
        // A failed run is not a finished sweep's success: a script must see it (its files are kept all the same).
        process.exitCode = interrupts.signal.aborted ? EXIT_INTERRUPTED : failed.length > 0 ? EXIT_SWEEP_RUN_FAILED : EXIT_OK;
      } finally {
        interrupts.dispose();
      }
    });
}
