import { percentileOfSorted } from '../statistics.js';

/**
 * The confidence every interval servelab states is for: 95%, two-sided. One level everywhere keeps intervals
 * comparable between runs, repeats and comparisons (docs/statistics.md).
 */
export const CONFIDENCE = 0.95;

/** Resamples a bootstrap draws unless told otherwise: enough for the 2.5% and 97.5% points to settle (docs/statistics.md). */
export const DEFAULT_RESAMPLES = 2000;

/**
 * Resamples of the two-level bootstrap (repeats, compare) unless told otherwise: each costs a draw per value, where the
 * single run's order-statistic bootstrap costs two variates, so fewer (docs/statistics.md).
 */
export const DEFAULT_TWO_LEVEL_RESAMPLES = 1000;

/** The seed of a bootstrap when none is given: a fixed one, so the same records always give the same interval. */
export const DEFAULT_BOOTSTRAP_SEED = 20_240_527;

/**
 * The percentile interval of bootstrap draws: the (1 − confidence)/2 and (1 + confidence)/2 points of their
 * distribution (numpy's linear percentile, like every percentile servelab reports). Sorts `draws` in place.
 */
export function percentileInterval(draws: Float64Array, confidence = CONFIDENCE): { low: number; high: number } {
  draws.sort();
  const tail = ((1 - confidence) / 2) * 100;
  return { low: percentileOfSorted(draws, tail), high: percentileOfSorted(draws, 100 - tail) };
}

/** Student's t two-sided 95% quantiles (0.975 points) for 1..30 degrees of freedom. */
const T_975: readonly number[] = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08,
  2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/** The 0.975 point of Student's t with `degreesOfFreedom`; past 30 the Cornish-Fisher expansion (within 0.001 there). */
export function tQuantile975(degreesOfFreedom: number): number {
  if (degreesOfFreedom < 1) return Number.NaN;
  if (degreesOfFreedom <= T_975.length) return T_975[Math.floor(degreesOfFreedom) - 1] as number;
  const z = 1.959964;
  return z + (z ** 3 + z) / (4 * degreesOfFreedom) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * degreesOfFreedom ** 2);
}

/** Mean and sample variance (n − 1) of the values. */
export function meanAndVariance(values: readonly number[]): { mean: number; variance: number } {
  const count = values.length;
  const mean = values.reduce((sum, value) => sum + value, 0) / count;
  const variance = count < 2 ? Number.NaN : values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (count - 1);
  return { mean, variance };
}
