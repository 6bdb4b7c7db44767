import { rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { combineRepeats } from '../../analysis/bootstrap/combine-repeats.js';
import type { NodeTestConfig, RoutingTestConfig } from '../../config/schema.js';
import type { RunOptions } from '../../orchestration/measured-run.js';
import { createRunDirectory } from '../../orchestration/run-directory.js';
import { buildRepeatsFile, type RepeatEntry, type RepeatsFile } from '../../report/repeats/repeats-file.js';
import { writeRepeatsFiles } from '../../report/repeats/write-repeats-files.js';
import type { TestLevel } from '../../types/run.js';
import type { TestResult } from '../test-result.js';
import { isServelabError } from '../../errors/servelab-error.js';

/** What `runRepeats()` returns: every repeat's own result, and the combined estimates written at the top. */
export interface RepeatsResult {
  /** The repeats directory: `repeat-1/` .. `repeat-N/` and the combined summary.json, repeats.csv, report.html. */
  outputDirectory: string;
  repeats: TestResult[];
  combined: RepeatsFile;
  files: string[];
}

export interface RepeatsOptions extends RunOptions {
  /** Told before each repeat starts (1-based). */
  onRepeatStart?: (repeat: number, of: number, seed: number) => void;
}

/** Repeat k's seed (1-based): the base seed plus k − 1, so repeat 1 is the run the same settings make without repeats. */
export function repeatSeed(baseSeed: number, repeat: number): number {
  return baseSeed + repeat - 1;
}

/**
 * Runs a test `config.repeats` times, each a complete run in `repeat-k/` with its own seed, then writes the combined
 * estimates (docs/statistics.md). An interrupted repeat ends the series: what it measured is written, and the
 * combination is over the repeats that completed.
 */
export async function runRepeats<Config extends NodeTestConfig | RoutingTestConfig>(
  config: Config,
  testLevel: TestLevel,
  runOnce: (config: Config, options: RunOptions) => Promise<TestResult>,
  options: RepeatsOptions = {},
): Promise<RepeatsResult> {
  const directory = await createRunDirectory({ outputDir: config.outputDir, resultsRoot: config.resultsRoot, runId: config.runId, testLevel });
  // The repeats directory holds runs, it is not one: no logs of its own (each repeat has its logs/).
  await rmdir(directory.logsPath).catch(() => undefined);
  // Each repeat opens its own journal (its own requests.jsonl): a caller's one would take every repeat's records.
  const { journal: _journal, onRepeatStart, ...perRepeat } = options;
  const results: TestResult[] = [];
  const entries: RepeatEntry[] = [];
  for (let repeat = 1; repeat <= config.repeats; repeat++) {
    const seed = repeatSeed(config.seed, repeat);
    onRepeatStart?.(repeat, config.repeats, seed);
    const name = `repeat-${repeat}`;
    let result: TestResult;
    try {
      result = await runOnce({ ...config, repeats: 1, seed, outputDir: join(directory.path, name), runId: `${directory.runId}-${name}` }, perRepeat);
    } catch (error) {
      // Interrupted while a later repeat started up: the repeats made so far are still combined and written.
      if (results.length > 0 && isServelabError(error) && error.code === 'INTERRUPTED') break;
      throw error;
    }
    results.push(result);
    entries.push({ repeat, directory: name, runId: result.runId, seed, status: result.status, verdict: result.metrics.verdict.state });
    if (result.status !== 'completed' || options.signal?.aborted === true) break;
  }
  const completed = results.filter((result) => result.status === 'completed');
  const combinedFrom = completed.length > 0 ? completed : results;
  const combined = buildRepeatsFile(testLevel, entries, combineRepeats(combinedFrom.map((result) => result.run), combinedFrom.map((result) => result.metrics)));
  const files = await writeRepeatsFiles(directory.path, combined);
  return { outputDirectory: directory.path, repeats: results, combined, files };
}
