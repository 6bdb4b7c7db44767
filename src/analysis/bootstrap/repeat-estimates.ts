import type { IntervalEstimate } from '../../types/summary.js';
import { SeededRandom } from '../../utils/random.js';
import { CONFIDENCE, DEFAULT_BOOTSTRAP_SEED, DEFAULT_TWO_LEVEL_RESAMPLES, meanAndVariance, percentileInterval, tQuantile975 } from './confidence-interval.js';
import { hierarchicalBootstrapDraws, PooledRuns, resamplesFor, type BootstrapStatistic } from './hierarchical-bootstrap.js';

/**
 * Estimates with intervals of a metric's statistics over runs' values (each run's values: its requests' latencies), by
 * the two-level bootstrap; with one run, the bootstrap over its requests. Seeded: the same runs give the same intervals.
 */
export function bootstrapEstimates(
  runs: readonly ArrayLike<number>[],
  statistics: readonly BootstrapStatistic[],
  options: { resamples?: number; seed?: number } = {},
): Record<BootstrapStatistic, IntervalEstimate> | null {
  const pooled = new PooledRuns(runs);
  if (pooled.valueCount === 0) return null;
  const usable = pooled.valueCount >= 2;
  const resamples = resamplesFor(pooled.valueCount, options.resamples ?? DEFAULT_TWO_LEVEL_RESAMPLES);
  const draws = usable ? hierarchicalBootstrapDraws(pooled, statistics, resamples, new SeededRandom(options.seed ?? DEFAULT_BOOTSTRAP_SEED)) : undefined;
  const method = pooled.runCount > 1 ? 'bootstrap-runs-requests' : 'bootstrap-requests';
  const estimates = {} as Record<BootstrapStatistic, IntervalEstimate>;
  for (const statistic of statistics) {
    const statisticDraws = draws?.get(statistic);
    const interval = statisticDraws === undefined ? null : percentileInterval(statisticDraws, CONFIDENCE);
    estimates[statistic] = {
      estimate: pooled.pooled(statistic),
      low: interval?.low ?? null,
      high: interval?.high ?? null,
      method: interval === null ? 'none' : method,
      runs: pooled.runCount,
      requests: pooled.valueCount,
      resamples: interval === null ? null : resamples,
    };
  }
  return estimates;
}

/**
 * A per-run figure (throughput, goodput: one value a run) over runs: the mean with Student's t interval. With one run
 * there is no spread to measure, so no interval.
 */
export function perRunEstimate(values: readonly number[], requests: number): IntervalEstimate {
  const finite = values.filter((value) => Number.isFinite(value));
  const { mean, variance } = meanAndVariance(finite);
  if (finite.length < 2) return { estimate: finite.length === 1 ? mean : Number.NaN, low: null, high: null, method: 'none', runs: finite.length, requests, resamples: null };
  const halfWidth = tQuantile975(finite.length - 1) * Math.sqrt(variance / finite.length);
  return { estimate: mean, low: mean - halfWidth, high: mean + halfWidth, method: 't-over-runs', runs: finite.length, requests, resamples: null };
}

/** What one side of a difference is: its runs' values of the metric. */
export type BootstrapSide = readonly ArrayLike<number>[];

/** A difference with its interval, and whether the interval excludes 0. */
export type DifferenceEstimate = IntervalEstimate & { beyondNoise: boolean };

/**
 * The differences `after − before` of statistics with their intervals: each side bootstrapped on its own (two-level
 * when it has several runs) with independent generators, the interval that of the paired draws' differences. "Within
 * the noise" when the interval holds 0.
 */
export function bootstrapDifferences(
  before: BootstrapSide,
  after: BootstrapSide,
  statistics: readonly BootstrapStatistic[],
  options: { resamples?: number; seed?: number } = {},
): Map<BootstrapStatistic, DifferenceEstimate> {
  const differencesByStatistic = new Map<BootstrapStatistic, DifferenceEstimate>();
  const first = new PooledRuns(before);
  const second = new PooledRuns(after);
  if (first.valueCount < 2 || second.valueCount < 2) return differencesByStatistic;
  const resamples = resamplesFor(first.valueCount + second.valueCount, options.resamples ?? DEFAULT_TWO_LEVEL_RESAMPLES);
  const seed = options.seed ?? DEFAULT_BOOTSTRAP_SEED;
  const firstDraws = hierarchicalBootstrapDraws(first, statistics, resamples, new SeededRandom(seed));
  const secondDraws = hierarchicalBootstrapDraws(second, statistics, resamples, new SeededRandom(seed + 1));
  for (const statistic of statistics) {
    const a = firstDraws.get(statistic) as Float64Array;
    const b = secondDraws.get(statistic) as Float64Array;
    const differences = new Float64Array(resamples);
    for (let index = 0; index < resamples; index++) differences[index] = (b[index] as number) - (a[index] as number);
    const { low, high } = percentileInterval(differences, CONFIDENCE);
    differencesByStatistic.set(statistic, {
      estimate: second.pooled(statistic) - first.pooled(statistic),
      low,
      high,
      method: first.runCount > 1 || second.runCount > 1 ? 'bootstrap-runs-requests' : 'bootstrap-requests',
      runs: first.runCount + second.runCount,
      requests: first.valueCount + second.valueCount,
      resamples,
      beyondNoise: low > 0 || high < 0,
    });
  }
  return differencesByStatistic;
}

/** One statistic's difference (bootstrapDifferences for one); null when a side has fewer than two values. */
export function bootstrapDifference(
  before: BootstrapSide,
  after: BootstrapSide,
  statistic: BootstrapStatistic,
  options: { resamples?: number; seed?: number } = {},
): DifferenceEstimate | null {
  return bootstrapDifferences(before, after, [statistic], options).get(statistic) ?? null;
}

/** The difference of per-run figures' means (Welch's t interval); null unless each side has two runs or more. */
export function perRunDifference(before: readonly number[], after: readonly number[]): DifferenceEstimate | null {
  const a = meanAndVariance(before.filter(Number.isFinite));
  const b = meanAndVariance(after.filter(Number.isFinite));
  const na = before.filter(Number.isFinite).length;
  const nb = after.filter(Number.isFinite).length;
  if (na < 2 || nb < 2) return null;
  const varianceA = a.variance / na;
  const varianceB = b.variance / nb;
  const standardError = Math.sqrt(varianceA + varianceB);
  // Welch–Satterthwaite degrees of freedom; all-equal values on both sides leave no spread: one degree, zero width.
  const degrees = standardError === 0 ? 1 : (varianceA + varianceB) ** 2 / (varianceA ** 2 / (na - 1) + varianceB ** 2 / (nb - 1));
  const halfWidth = tQuantile975(Math.max(1, Math.floor(degrees))) * standardError;
  const estimate = b.mean - a.mean;
  return { estimate, low: estimate - halfWidth, high: estimate + halfWidth, method: 't-over-runs', runs: na + nb, requests: 0, resamples: null, beyondNoise: estimate - halfWidth > 0 || estimate + halfWidth < 0 };
}
