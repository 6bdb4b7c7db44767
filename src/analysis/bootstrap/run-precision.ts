import type { IntervalEstimate, MetricPrecision, RunPrecision } from '../../types/summary.js';
import { SeededRandom } from '../../utils/random.js';
import { percentileOfSorted } from '../statistics.js';
import { CONFIDENCE, DEFAULT_BOOTSTRAP_SEED, DEFAULT_RESAMPLES, percentileInterval } from './confidence-interval.js';
import { orderStatisticBootstrapDraws } from './order-statistic-bootstrap.js';

/** The values at or above p99's rank in `count` values: p99 interpolates between rank floor(0.99(n − 1)) and the next. */
export function p99DecidedByTop(count: number): number {
  return count === 0 ? 0 : count - 1 - Math.floor(0.99 * (count - 1));
}

function percentileEstimate(sorted: Float64Array, q: number, random: SeededRandom, resamples: number): IntervalEstimate {
  // Exact: the band around q's rank is in order (orderPercentileBands), and the rank and the next lie inside it.
  const estimate = percentileOfSorted(sorted, q);
  if (sorted.length < 2) return { estimate, low: null, high: null, method: 'none', runs: 1, requests: sorted.length, resamples: null };
  const { low, high } = percentileInterval(orderStatisticBootstrapDraws(sorted, q, resamples, random), CONFIDENCE);
  return { estimate, low, high, method: 'bootstrap-requests', runs: 1, requests: sorted.length, resamples };
}

/** The percentiles a run's precision gives intervals for. */
export const PRECISION_PERCENTILES: readonly number[] = [50, 90, 99];

/**
 * One run's precision: per metric (finite values in order around p50, p90 and p99 at least: orderPercentileBands, or
 * fully sorted; keyed by its summary.json name), the values p99 rests on
 * and bootstrap intervals over the requests. Each metric draws from its own generator seeded from `seed` and the
 * metric's place in the list, so adding a metric does not move another's interval.
 */
export function runPrecision(sortedByMetric: ReadonlyArray<readonly [string, Float64Array]>, resamples = DEFAULT_RESAMPLES, seed = DEFAULT_BOOTSTRAP_SEED): RunPrecision {
  const metrics: Record<string, MetricPrecision> = {};
  sortedByMetric.forEach(([name, sorted], index) => {
    if (sorted.length === 0) return;
    const random = new SeededRandom(seed + index);
    metrics[name] = {
      values: sorted.length,
      p99DecidedByTop: p99DecidedByTop(sorted.length),
      p50: percentileEstimate(sorted, 50, random, resamples),
      p90: percentileEstimate(sorted, 90, random, resamples),
      p99: percentileEstimate(sorted, 99, random, resamples),
    };
  });
  return { confidence: CONFIDENCE, resamples, seed, metrics };
}
