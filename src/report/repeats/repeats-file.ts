import type { CombinedMetric, CombinedRepeats } from '../../analysis/bootstrap/combine-repeats.js';
import type { LoadVerdict } from '../../types/verdict.js';
import type { RunStatus, TestLevel } from '../../types/run.js';

/** summary.json of a repeats directory: its own format, so that no reader takes it for one run's summary. */
export const REPEATS_FORMAT = 'servelab-repeats';
export const REPEATS_FORMAT_VERSION = 1;

/** One repeat as the combined summary lists it. */
export interface RepeatEntry {
  repeat: number;
  /** Its run directory, relative to the repeats directory (`repeat-1`). */
  directory: string;
  runId: string;
  seed: number;
  status: RunStatus;
  verdict: LoadVerdict['state'];
}

/** What a repeats directory's summary.json holds (docs/statistics.md). */
export interface RepeatsFile {
  format: typeof REPEATS_FORMAT;
  formatVersion: number;
  test: TestLevel;
  repeats: number;
  /** How each repeat's seed follows from the base seed. */
  seedRule: string;
  runs: RepeatEntry[];
  confidence: number;
  bootstrap: { resamples: number; seed: number; method: string };
  metrics: CombinedMetric[];
}

/** How repeat k's seed is derived: stated in the file and in docs/statistics.md. */
export const SEED_RULE = 'repeat k (1..N) runs with seed + k - 1';

export const BOOTSTRAP_METHOD_TEXT =
  'latencies: two-level bootstrap (resample runs with replacement, then requests within each run; statistic of all drawn values pooled; 2.5% and 97.5% points of the resamples); throughput and goodput: Student t over the per-run values';

export function buildRepeatsFile(test: TestLevel, runs: RepeatEntry[], combined: CombinedRepeats): RepeatsFile {
  return {
    format: REPEATS_FORMAT,
    formatVersion: REPEATS_FORMAT_VERSION,
    test,
    repeats: runs.length,
    seedRule: SEED_RULE,
    runs,
    confidence: combined.confidence,
    bootstrap: { resamples: combined.resamples, seed: combined.bootstrapSeed, method: BOOTSTRAP_METHOD_TEXT },
    metrics: combined.metrics,
  };
}

/** Whether a parsed summary.json is a repeats directory's. */
export function isRepeatsFile(parsed: unknown): parsed is RepeatsFile {
  return typeof parsed === 'object' && parsed !== null && (parsed as { format?: unknown }).format === REPEATS_FORMAT;
}

/** repeats.csv's columns, one row per metric and statistic: for pandas.read_csv. */
export const REPEATS_CSV_COLUMNS = ['metric', 'statistic', 'unit', 'estimate', 'low', 'high', 'method', 'runs', 'requests', 'resamples'] as const;
