import { SeededRandom } from '../../utils/random.js';
import { multiSelectInPlace } from '../statistics.js';
import { CONFIDENCE, DEFAULT_BOOTSTRAP_SEED, DEFAULT_RESAMPLES, percentileInterval } from './confidence-interval.js';

/**
 * The bootstrap of one run's percentile, drawn without building the resamples. A bootstrap resample of n requests is
 * n draws from the run's empirical distribution, which is x_sorted[floor(n·U)] for uniform U; sorting is monotone, so
 * the resample's k-th smallest value is x_sorted[floor(n·U_(k))], where U_(k), the k-th smallest of n uniforms, is
 * Beta(k, n + 1 − k), and the next one above it is U_(k) plus the smallest of the n − k uniforms left above it. Each
 * resample's percentile (numpy's linear interpolation between ranks k and k + 1) thus costs two variates, not n draws
 * and a selection: the interval of a million-request run costs what a hundred-request run's does, and its draws have
 * exactly the distribution of the resampling bootstrap's (test/analysis/bootstrap checks both against each other).
 */
export function orderStatisticBootstrapDraws(sorted: ArrayLike<number>, q: number, resamples: number, random: SeededRandom): Float64Array {
  const count = sorted.length;
  const draws = new Float64Array(resamples);
  const rank = (q / 100) * (count - 1);
  const lowerRank = Math.floor(rank) + 1; // 1-based
  const fraction = rank - Math.floor(rank);
  // Only the band around the rank need be in order (percentileBand): a draw beyond it, more than ten standard
  // deviations of the order statistic away, is taken at its edge.
  const [bandLow, bandHigh] = percentileBand(count, q);
  const valueAt = (uniform: number): number => sorted[Math.max(bandLow, Math.min(bandHigh, Math.floor(count * uniform)))] as number;
  for (let index = 0; index < resamples; index++) {
    const a = random.gamma(lowerRank, 1);
    const b = random.gamma(count + 1 - lowerRank, 1);
    const lowerUniform = a / (a + b);
    const lower = valueAt(lowerUniform);
    if (fraction === 0 || lowerRank >= count) {
      draws[index] = lower;
      continue;
    }
    // The smallest of the count − lowerRank uniforms above lowerUniform: lowerUniform + (1 − lowerUniform)·Beta(1, m).
    const above = count - lowerRank;
    const spacing = 1 - Math.pow(1 - random.next(), 1 / above);
    const upper = valueAt(lowerUniform + (1 - lowerUniform) * spacing);
    draws[index] = lower + (upper - lower) * fraction;
  }
  return draws;
}

/**
 * The indices (inclusive) around the q-th percentile's rank that its bootstrap draws reach: ten standard deviations
 * of the resample's order statistic, sqrt(n q (1 − q)) indices each, and two more either side. Outside it a draw falls
 * with a probability under 1e-20.
 */
export function percentileBand(count: number, q: number): [number, number] {
  const share = q / 100;
  const rank = Math.floor(share * (count - 1));
  const width = Math.ceil(10 * Math.sqrt(count * share * (1 - share))) + 2;
  return [Math.max(0, rank - width), Math.min(count - 1, rank + width + 1)];
}

/**
 * Orders `values` (finite, reordered in place) only where the bootstraps of the given percentiles look: each band's
 * ends are selected as order statistics (everything left of a band is no larger, everything right no smaller), then
 * the band alone is sorted. For a million values this is one selection and a few thousand sorted, not a full sort.
 */
export function orderPercentileBands(values: Float64Array, percentiles: readonly number[]): Float64Array {
  const bands = percentiles.map((q) => percentileBand(values.length, q));
  const ranks = [...new Set(bands.flat())].sort((a, b) => a - b);
  if (values.length > 0) multiSelectInPlace(values, ranks);
  for (const [low, high] of bands) values.subarray(low, high + 1).sort();
  return values;
}

export interface SingleRunIntervalOptions {
  resamples?: number;
  seed?: number;
  confidence?: number;
}

/** A 95% interval for one run's q-th percentile from the bootstrap over its requests (seeded: the same values give the same interval). */
export function singleRunPercentileInterval(sorted: ArrayLike<number>, q: number, options: SingleRunIntervalOptions = {}): { low: number; high: number } | null {
  if (sorted.length < 2) return null;
  const random = new SeededRandom(options.seed ?? DEFAULT_BOOTSTRAP_SEED);
  return percentileInterval(orderStatisticBootstrapDraws(sorted, q, options.resamples ?? DEFAULT_RESAMPLES, random), options.confidence ?? CONFIDENCE);
}
