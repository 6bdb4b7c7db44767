import type { Statistics } from '../types/summary.js';

/**
 * The q-th percentile (0..100) of ascending `sorted` values by linear interpolation between the closest ranks, which is
 * numpy's default (`method="linear"`): rank = q/100 × (n − 1), then interpolate between floor(rank) and ceil(rank).
 */
export function percentileOfSorted(sorted: ArrayLike<number>, q: number): number {
  const count = sorted.length;
  if (count === 0) return Number.NaN;
  const rank = (q / 100) * (count - 1);
  const lowerIndex = Math.floor(rank);
  const upperIndex = Math.min(lowerIndex + 1, count - 1);
  const lower = sorted[lowerIndex] as number;
  const upper = sorted[upperIndex] as number;
  return lower + (upper - lower) * (rank - lowerIndex);
}

/** Copies the finite values (dropping NaN, which marks a missing value) into a new ascending Float64Array. */
export function sortedFiniteValues(values: ArrayLike<number>): Float64Array {
  const kept = new Float64Array(values.length);
  let count = 0;
  for (let index = 0; index < values.length; index++) {
    const value = values[index] as number;
    if (value === value) kept[count++] = value; // NaN is the only value not equal to itself
  }
  // A typed array sorts numerically in native code, far faster than a comparator over a JS array.
  return kept.subarray(0, count).sort();
}

/** Statistics of ascending values already free of NaN; null when there are none. */
export function statisticsOfSorted(sorted: Float64Array): Statistics | null {
  const count = sorted.length;
  if (count === 0) return null;
  let sum = 0;
  for (let index = 0; index < count; index++) sum += sorted[index] as number;
  const mean = sum / count;
  // Two passes (mean first) keep the variance accurate when values are large relative to their spread.
  let squaredDeviations = 0;
  for (let index = 0; index < count; index++) {
    const deviation = (sorted[index] as number) - mean;
    squaredDeviations += deviation * deviation;
  }
  return {
    count,
    mean,
    std: Math.sqrt(squaredDeviations / count),
    min: sorted[0] as number,
    p50: percentileOfSorted(sorted, 50),
    p90: percentileOfSorted(sorted, 90),
    p95: percentileOfSorted(sorted, 95),
    p99: percentileOfSorted(sorted, 99),
    max: sorted[count - 1] as number,
  };
}

/** Statistics of the values, ignoring NaN (a missing value); null when no value is left. */
export function computeStatistics(values: ArrayLike<number>): Statistics | null {
  return statisticsOfSorted(sortedFiniteValues(values));
}

/** Coefficient of variation (population std / mean) of the values; null with fewer than two values or a zero mean. */
export function coefficientOfVariation(values: ArrayLike<number>): number | null {
  const count = values.length;
  if (count < 2) return null;
  let sum = 0;
  for (let index = 0; index < count; index++) sum += values[index] as number;
  const mean = sum / count;
  if (mean === 0) return null;
  let squaredDeviations = 0;
  for (let index = 0; index < count; index++) {
    const deviation = (values[index] as number) - mean;
    squaredDeviations += deviation * deviation;
  }
  return Math.sqrt(squaredDeviations / count) / mean;
}
