import { correctRunClocks } from '../analysis/clock-offset/correct-run-clocks.js';
import { summarize } from '../analysis/summarize.js';
import type { RunData } from '../types/run.js';
import type { SloTargets, Summary } from '../types/summary.js';
import { DEFAULT_REPORTER_NAMES } from './registry.js';
import { readRunDirectory } from './run-directory.js';
import { writeRunFiles } from './write-run-files.js';

export interface RegenerateOptions {
  /** Reporters to run (default: every built-in one). */
  reporterNames?: readonly string[];
  /** Goodput objectives; default: the ones the run used (from its summary.json). */
  slo?: SloTargets;
}

/** `servelab report DIR`: reads a run directory back, re-analyzes it and rewrites every file from the data. */
export async function regenerateReport(directory: string, options: RegenerateOptions = {}): Promise<{ run: RunData; summary: Summary; written: string[] }> {
  const loaded = await readRunDirectory(directory);
  const slo = options.slo ?? loaded.summaryFile.metrics?.goodput?.slo;
  const run = correctRunClocks(loaded.run);
  const summary = summarize(run, slo === undefined ? {} : { slo });
  const written = await writeRunFiles(run, summary, directory, options.reporterNames ?? DEFAULT_REPORTER_NAMES);
  return { run, summary, written };
}
