import { correctRunClocks } from '../analysis/clock-offset/correct-run-clocks.js';
import { summarize } from '../analysis/summarize.js';
import { readSloTargets } from '../config/slo-targets.js';
import { ServelabError } from '../errors/servelab-error.js';
import { regenerateReport, runSlo } from '../report/regenerate.js';
import { readRunDirectory } from '../report/run-directory.js';
import type { RunData } from '../types/run.js';
import type { SloTargets } from '../types/summary.js';
import { withFirstUsersNames, type ResultMetrics } from './first-users-names.js';
import type { TestResult } from './test-result.js';

/** A run to analyze: its directory, or the result a test's `run()` returned (the first users passed the result). */
export type RunSource = string | Pick<TestResult, 'outputDirectory' | 'run'>;

function isResult(source: unknown): source is Pick<TestResult, 'outputDirectory' | 'run'> {
  return typeof source === 'object' && source !== null && typeof (source as Partial<TestResult>).outputDirectory === 'string';
}

function directoryOf(source: RunSource): string {
  if (typeof source === 'string') return source;
  if (isResult(source)) return source.outputDirectory;
  throw new ServelabError('INVALID_RUN_DIRECTORY', "give a run directory (results/<run-id>) or the result a test's run() returned");
}

/**
 * The options as given, read strictly: `slo` is the only option, its objectives in camelCase or snake_case
 * (`ttft_ms`); any other key is refused rather than ignored (an ignored objective reported 100% goodput).
 */
function readOptions(options: unknown, where: string): { slo?: SloTargets } {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new ServelabError('INVALID_CONFIG', `${where}: options must be an object such as { slo: { ttftMs: 500 } }, got ${JSON.stringify(options)}`);
  }
  const unknown = Object.keys(options).filter((key) => key !== 'slo');
  if (unknown.length > 0) {
    throw new ServelabError('INVALID_CONFIG', `${where}: unknown option${unknown.length > 1 ? 's' : ''} ${unknown.map((key) => `"${key}"`).join(', ')}; the only option is slo, e.g. { slo: { ttftMs: 500 } }`);
  }
  const slo = (options as { slo?: unknown }).slo;
  return slo === undefined ? {} : { slo: readSloTargets(slo, `${where} slo`) };
}

/**
 * Analyzes a run again (with other SLOs, say), without rewriting any file: from a result object's records in memory,
 * or from a run directory read back. The metrics answer servelab's names and the first users' (`p99_ttft`, ... in
 * milliseconds). Throws INVALID_RUN_DIRECTORY naming what is missing when a directory is incomplete or from another
 * version, or when the source is neither a directory nor a result.
 */
export async function analyzeResults(source: RunSource, options: { slo?: SloTargets } = {}): Promise<{ run: RunData; metrics: ResultMetrics }> {
  let run: RunData;
  let slo = readOptions(options, 'analyzeResults').slo;
  if (isResult(source) && source.run !== undefined) {
    // A result's run is already on the client's clock (finishing the run corrected it).
    run = source.run;
    slo ??= (source as Partial<TestResult>).metrics?.goodput?.slo ?? (run.config.slo as SloTargets | undefined);
  } else {
    const loaded = await readRunDirectory(directoryOf(source));
    run = correctRunClocks(loaded.run);
    slo ??= runSlo(loaded);
  }
  return { run, metrics: withFirstUsersNames(summarize(run, slo === undefined ? {} : { slo })) };
}

/** Regenerates a run's report, charts and tables from its records (what `servelab report DIR` does): a directory or a result. */
export async function visualizeResults(source: RunSource, options: { slo?: SloTargets } = {}): Promise<string[]> {
  const { written } = await regenerateReport(directoryOf(source), readOptions(options, 'visualizeResults'));
  return written;
}
