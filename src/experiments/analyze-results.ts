import { correctRunClocks } from '../analysis/clock-offset/correct-run-clocks.js';
import { summarize } from '../analysis/summarize.js';
import { regenerateReport, runSlo } from '../report/regenerate.js';
import { readRunDirectory } from '../report/run-directory.js';
import type { RunData } from '../types/run.js';
import type { SloTargets, Summary } from '../types/summary.js';

/**
 * Reads a run directory back and analyzes it again (with other SLOs, say), without rewriting any file.
 * Throws INVALID_RUN_DIRECTORY naming what is missing when the directory is incomplete or from another version.
 */
export async function analyzeResults(directory: string, options: { slo?: SloTargets } = {}): Promise<{ run: RunData; metrics: Summary }> {
  const loaded = await readRunDirectory(directory);
  const slo = options.slo ?? runSlo(loaded);
  const run = correctRunClocks(loaded.run);
  return { run, metrics: summarize(run, slo === undefined ? {} : { slo }) };
}

/** Regenerates a run directory's report, charts and tables from its records (what `servelab report DIR` does). */
export async function visualizeResults(directory: string, options: { slo?: SloTargets } = {}): Promise<string[]> {
  const { written } = await regenerateReport(directory, options);
  return written;
}
