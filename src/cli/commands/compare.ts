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
    .description(
      'Lines runs up side by side. For TTFT, TPOT, ITL and E2E latency (mean, p50, p90, p99), and for throughput and goodput when both sides have repeats, each run after the first gets a Δ column: its difference from the first run with a 95% interval (latencies: a seeded bootstrap of the difference over requests, and over runs where a side is a repeats directory; throughput: Welch t over repeats), marked "beyond noise" when the interval excludes 0 and "within noise" when it holds 0 (docs/statistics.md). A repeats directory (--repeats N) is compared as all its repeats.',
    )
    .argument('<dirs...>', 'two or more run directories, or repeats directories (a run made with --repeats N)')
    .option('--output-dir <dir>', 'where to write compare.csv, compare.html and charts/ (default: results/compare-<time>)')
    .option('--slo <objectives>', 'goodput objectives in ms applied to every run, e.g. ttft=200,tpot=50 (default: each run’s own)', parseSlo)
    .action(async (directories: string[], options: CompareCommandOptions) => {
      if (directories.length < 2) {
        throw new ServelabError('INVALID_CONFIG', 'servelab compare needs at least two run directories.');
      }
      const [{ readRunDirectory }, { summarize }, { settingLabels, uniqueLabels, writeComparison, formatComparisonTable }, { readRepeatsDirectory, repeatsFileOf }, { combineRepeats }, { comparePdRuns, formatPdComparison, pdComparisonCsv, COMPARE_PD_CSV }, { writeFileAtomic }] = await Promise.all([
        import('../../report/run-directory.js'),
        import('../../analysis/summarize.js'),
        import('../../report/compare/compare-runs.js'),
        import('../../report/repeats/read-repeats-directory.js'),
        import('../../analysis/bootstrap/combine-repeats.js'),
        import('../../report/compare/compare-pd.js'),
        import('../../utils/atomic-write.js'),
      ]);
      const slo = options.slo;
      // Read every directory first, so one bad directory is reported before anything is written. A repeats directory
      // (--repeats N) comes as all its repeats: its first stands for it where a row has no estimate over them.
      type LoadedRun = Awaited<ReturnType<typeof readRunDirectory>>;
      const loaded: (LoadedRun & { repeats?: LoadedRun[] })[] = [];
      for (const directory of directories) {
        const repeatsFile = await repeatsFileOf(directory);
        if (repeatsFile === undefined) {
          loaded.push(await readRunDirectory(directory));
        } else {
          const series = await readRepeatsDirectory(directory, repeatsFile);
          loaded.push({ ...(series.repeats[0] as LoadedRun), directory, repeats: series.repeats });
        }
      }
      // Each run is labelled by the settings that differ between the runs (max_running_requests=64); by its id when
      // none differs or two runs would share a label.
      const labels =
        settingLabels(loaded.map((entry) => entry.run.config)) ??
        uniqueLabels(loaded.map((entry) => ({ runId: entry.run.info.runId, directoryName: basename(resolve(entry.directory)) })));
      const runs = loaded.map((entry, index) => {
        const summaries = (entry.repeats ?? [entry]).map((repeat) => {
          const runSlo = slo ?? repeat.summaryFile?.metrics?.goodput?.slo;
          return summarize(repeat.run, runSlo === undefined ? {} : { slo: runSlo });
        });
        const label = labels[index] as string;
        if (entry.repeats === undefined) return { label, run: entry.run, summary: summaries[0] as (typeof summaries)[number] };
        const repeats = entry.repeats.map((repeat, repeatIndex) => ({ run: repeat.run, summary: summaries[repeatIndex] as (typeof summaries)[number] }));
        return {
          label: `${label} (${repeats.length} repeats)`,
          run: entry.run,
          summary: summaries[0] as (typeof summaries)[number],
          repeats,
          combined: combineRepeats(repeats.map((repeat) => repeat.run), summaries),
        };
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
