import { terminalSafe } from '../../utils/terminal-text.js';
import { basename, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { ServelabError } from '../../errors/servelab-error.js';
import type { SloTargets } from '../../types/summary.js';
import { parseSlo } from '../options/option-table.js';

interface CompareCommandOptions {
  outputDir?: string;
  slo?: SloTargets;
}

function defaultOutputDirectory(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return resolve('results', `compare-${stamp}`);
}

/** `servelab compare DIR...`: runs side by side (a table on stdout, compare.csv, overlaid CDFs in compare.html). */
export function registerCompareCommand(program: Command): void {
  program
    .command('compare')
    .summary('line runs up side by side: a metrics table, overlaid latency CDFs, CSV for every table')
    .argument('<dirs...>', 'two or more run directories')
    .option('--output-dir <dir>', 'where to write compare.csv, compare.html and charts/ (default: results/compare-<time>)')
    .option('--slo <objectives>', 'goodput objectives in ms applied to every run, e.g. ttft=200,tpot=50 (default: each run’s own)', parseSlo)
    .action(async (directories: string[], options: CompareCommandOptions) => {
      if (directories.length < 2) {
        throw new ServelabError('INVALID_CONFIG', 'servelab compare needs at least two run directories.');
      }
      const [{ readRunDirectory }, { summarize }, { settingLabels, uniqueLabels, writeComparison, formatComparisonTable }, { comparePdRuns, formatPdComparison, pdComparisonCsv, COMPARE_PD_CSV }, { writeFileAtomic }] = await Promise.all([
        import('../../report/run-directory.js'),
        import('../../analysis/summarize.js'),
        import('../../report/compare/compare-runs.js'),
        import('../../report/compare/compare-pd.js'),
        import('../../utils/atomic-write.js'),
      ]);
      const slo = options.slo;
      // Read every directory first, so one bad directory is reported before anything is written.
      const loaded = [];
      for (const directory of directories) loaded.push(await readRunDirectory(directory));
      // Each run is labelled by the settings that differ between the runs (max_running_requests=64); by its id when
      // none differs or two runs would share a label.
      const labels =
        settingLabels(loaded.map((entry) => entry.run.config)) ??
        uniqueLabels(loaded.map((entry) => ({ runId: entry.run.info.runId, directoryName: basename(resolve(entry.directory)) })));
      const runs = loaded.map((entry, index) => {
        const runSlo = slo ?? entry.summaryFile?.metrics?.goodput?.slo;
        return { label: labels[index] as string, run: entry.run, summary: summarize(entry.run, runSlo === undefined ? {} : { slo: runSlo }) };
      });
      const outputDirectory = options.outputDir ?? defaultOutputDirectory();
      const written = await writeComparison(runs, outputDirectory);
      process.stdout.write(terminalSafe(formatComparisonTable(runs)));
      // Prefill/decode disaggregation: which phases moved against the first run, and by how much (compare-pd.ts).
      const pd = comparePdRuns(runs);
      if (pd !== undefined) {
        process.stdout.write(terminalSafe(formatPdComparison(pd)));
        const path = join(outputDirectory, COMPARE_PD_CSV);
        await writeFileAtomic(path, pdComparisonCsv(pd));
        written.push(path);
      }
      process.stdout.write(`\n${written.map((path) => `wrote ${path}`).join('\n')}\n`);
    });
}
