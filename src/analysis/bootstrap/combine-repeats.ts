import type { DerivedColumnName, IntervalEstimate, Summary } from '../../types/summary.js';
import type { RunData } from '../../types/run.js';
import { deriveColumnArrays } from '../derive.js';
import { sampledInterTokenLatencies } from '../inter-token-gaps.js';
import { measuredRecords } from '../measured-records.js';
import { succeededOnly } from '../nodes.js';
import { CONFIDENCE, DEFAULT_BOOTSTRAP_SEED, DEFAULT_TWO_LEVEL_RESAMPLES } from './confidence-interval.js';
import { bootstrapEstimates, perRunEstimate } from './repeat-estimates.js';
import { BOOTSTRAP_STATISTICS, type BootstrapStatistic } from './hierarchical-bootstrap.js';

/** One headline figure over the repeats: what it is, its unit, and its estimate with the interval. */
export interface CombinedMetric extends IntervalEstimate {
  /** `ttft`, `request_throughput`, ... (a derived column's name for latencies, `itl` for inter-token latency). */
  metric: string;
  /** `mean`, `p50`, `p90`, `p99`, or `value` for a per-run figure. */
  statistic: BootstrapStatistic | 'value';
  unit: 'ms' | 'req/s' | 'tok/s';
}

/** The repeats' headline metrics, each with a 95% interval (docs/statistics.md). */
export interface CombinedRepeats {
  confidence: number;
  /** Resamples asked for; each metric states those it drew (fewer where its values are many: resamplesFor). */
  resamples: number;
  /** The bootstrap's seed: the same runs give the same intervals. */
  bootstrapSeed: number;
  metrics: CombinedMetric[];
}

/** Latencies the combined summary states, in the terminal's order: the headline ones, then the stages. */
export const COMBINED_LATENCIES: readonly (DerivedColumnName | 'itl')[] = [
  'ttft',
  'tpot',
  'itl',
  'total_latency',
  'queue_time_in_router',
  'network_time',
  'tokenize_time',
  'pure_queue_time',
  'queue_time_in_server',
  'prefill_time',
  'decode_time',
];

/**
 * Inter-token gaps a run gives the bootstrap at most: an even (stride) sample beyond it. A long-output run has
 * millions, each a draw per resample; a sample of this size keeps ITL's interval to seconds of CPU, and fewer values
 * can only widen it (the `requests` of its estimate count the gaps used).
 */
export const MAX_BOOTSTRAP_GAPS_PER_RUN = 100_000;

/** One run's values of a latency (seconds; succeeded requests; inter-token gaps for ITL, at most MAX_BOOTSTRAP_GAPS_PER_RUN). */
export function latencyValuesOf(run: RunData, metric: DerivedColumnName | 'itl'): Float64Array {
  const records = measuredRecords(run.records);
  if (metric === 'itl') {
    const sample = sampledInterTokenLatencies(records, MAX_BOOTSTRAP_GAPS_PER_RUN);
    // The sample ends with the smallest and largest gap (for a chart's range): not draws of the stride, left out here.
    return sample.subarray(0, Math.max(0, sample.length - 2));
  }
  let columns = columnsOfRun.get(run);
  if (columns === undefined) {
    columns = succeededOnly(records, deriveColumnArrays(records));
    columnsOfRun.set(run, columns);
  }
  return columns[metric];
}

/** Each run's derived columns, worked out once for all the latencies asked of it. */
const columnsOfRun = new WeakMap<RunData, Record<DerivedColumnName, Float64Array>>();

function toMilliseconds(estimate: IntervalEstimate): IntervalEstimate {
  const ms = (value: number | null): number | null => (value === null ? null : value * 1000);
  return { ...estimate, estimate: estimate.estimate * 1000, low: ms(estimate.low), high: ms(estimate.high) };
}

/**
 * The headline metrics of repeated runs: latencies by the two-level bootstrap over runs and requests (each statistic
 * of all runs' values pooled, with its interval), per-run figures (throughput, goodput) by Student's t over runs.
 */
export function combineRepeats(
  runs: readonly RunData[],
  summaries: readonly Summary[],
  options: { resamples?: number; seed?: number } = {},
): CombinedRepeats {
  const resamples = options.resamples ?? DEFAULT_TWO_LEVEL_RESAMPLES;
  const seed = options.seed ?? DEFAULT_BOOTSTRAP_SEED;
  const metrics: CombinedMetric[] = [];
  const requests = summaries.reduce((sum, summary) => sum + summary.counts.total, 0);
  const perRun = (metric: string, unit: CombinedMetric['unit'], pick: (summary: Summary) => number | undefined): void => {
    const values = summaries.map(pick).filter((value): value is number => value !== undefined);
    if (values.length === 0) return;
    metrics.push({ metric, statistic: 'value', unit, ...perRunEstimate(values, requests) });
  };
  perRun('request_throughput', 'req/s', (summary) => summary.throughput.requestsPerSecond);
  perRun('output_token_throughput', 'tok/s', (summary) => summary.throughput.outputTokensPerSecond);
  perRun('total_token_throughput', 'tok/s', (summary) => summary.throughput.totalTokensPerSecond);
  perRun('goodput', 'req/s', (summary) => summary.goodput?.requestsPerSecond);
  COMBINED_LATENCIES.forEach((metric, index) => {
    const statistics = BOOTSTRAP_STATISTICS;
    // Each metric its own seed (from the base and its place), so one metric's draws do not depend on another's.
    const estimates = bootstrapEstimates(runs.map((run) => latencyValuesOf(run, metric)), statistics, { resamples, seed: seed + index });
    if (estimates === null) return;
    for (const statistic of statistics) metrics.push({ metric, statistic, unit: 'ms', ...toMilliseconds(estimates[statistic]) });
  });
  return { confidence: CONFIDENCE, resamples, bootstrapSeed: seed, metrics };
}
