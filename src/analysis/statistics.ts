import type { Statistics } from '../types/summary.js';
import { takeFloat64, type Float64Arena } from './float-arena.js';

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
export function sortedFiniteValues(values: ArrayLike<number>, arena?: Float64Arena): Float64Array {
  const kept = takeFloat64(arena, values.length);
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

const PERCENTILES = [50, 90, 95, 99] as const;

/**
 * Places the order statistic of every rank (ascending, distinct) at its index: one partition, then recursion only into
 * the sides that still hold wanted ranks (Hoare partition, median-of-three pivot). For the eight ranks of four
 * percentiles this touches each value a few times, where eight independent selections would touch it a dozen.
 */
export function multiSelectInPlace(values: Float64Array, ranks: readonly number[], left = 0, right = values.length - 1, from = 0, to = ranks.length): void {
  while (from < to && right > left) {
    if (right - left === 1) {
      if ((values[left] as number) > (values[right] as number)) {
        const swap = values[left] as number;
        values[left] = values[right] as number;
        values[right] = swap;
      }
      return;
    }
    const middle = (left + right) >>> 1;
    let a = values[left] as number;
    let b = values[middle] as number;
    let c = values[right] as number;
    if (a > b) [a, b] = [b, a];
    if (b > c) [b, c] = [c, b];
    if (a > b) [a, b] = [b, a];
    values[left] = a;
    values[middle] = b;
    values[right] = c;
    const pivot = b;
    let i = left;
    let j = right;
    while (i <= j) {
      while ((values[i] as number) < pivot) i++;
      while ((values[j] as number) > pivot) j--;
      if (i <= j) {
        const swap = values[i] as number;
        values[i] = values[j] as number;
        values[j] = swap;
        i++;
        j--;
      }
    }
    // [left..j] ≤ pivot ≤ [i..right]; indices strictly between j and i hold the pivot value: those ranks are done.
    let leftEnd = from;
    while (leftEnd < to && (ranks[leftEnd] as number) <= j) leftEnd++;
    let rightStart = leftEnd;
    while (rightStart < to && (ranks[rightStart] as number) < i) rightStart++;
    // Recurse into the smaller group of ranks, loop on the other (bounded stack depth).
    if (leftEnd - from <= to - rightStart) {
      multiSelectInPlace(values, ranks, left, j, from, leftEnd);
      left = i;
      from = rightStart;
    } else {
      multiSelectInPlace(values, ranks, i, right, rightStart, to);
      right = j;
      to = leftEnd;
    }
  }
}

/**
 * Statistics of the values, ignoring NaN (a missing value); null when no value is left. Leaves `values` untouched; the
 * finite values are copied into `scratch` when it is large enough (callers summarizing many columns pass one buffer,
 * because every large allocation brings a full garbage collection of a heap holding a million records closer).
 */
export function computeStatistics(values: ArrayLike<number>, scratch?: Float64Array): Statistics | null {
  const buffer = scratch && scratch.length >= values.length ? scratch : new Float64Array(values.length);
  let count = 0;
  for (let index = 0; index < values.length; index++) {
    const value = values[index] as number;
    if (value === value) buffer[count++] = value; // NaN marks a missing value
  }
  return statisticsInPlace(buffer.subarray(0, count));
}

/**
 * Statistics of finite values, reordering them in place. Percentiles come from selection rather than a full sort: the
 * ranks they need are selected from the highest down, each within the part left of the previous one.
 */
export function statisticsInPlace(finite: Float64Array): Statistics | null {
  const count = finite.length;
  if (count === 0) return null;
  let sum = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let index = 0; index < count; index++) {
    const value = finite[index] as number;
    sum += value;
    if (value < min) min = value;
    if (value > max) max = value;
  }
  const mean = sum / count;
  let squaredDeviations = 0;
  for (let index = 0; index < count; index++) {
    const deviation = (finite[index] as number) - mean;
    squaredDeviations += deviation * deviation;
  }
  const ranks = new Set<number>();
  for (const q of PERCENTILES) {
    const rank = (q / 100) * (count - 1);
    ranks.add(Math.floor(rank));
    ranks.add(Math.min(Math.floor(rank) + 1, count - 1));
  }
  multiSelectInPlace(finite, [...ranks].sort((a, b) => a - b));
  const percentile = (q: number): number => {
    const rank = (q / 100) * (count - 1);
    const lowerIndex = Math.floor(rank);
    const lower = finite[lowerIndex] as number;
    const upper = finite[Math.min(lowerIndex + 1, count - 1)] as number;
    return lower + (upper - lower) * (rank - lowerIndex);
  };
  return {
    count,
    mean,
    std: Math.sqrt(squaredDeviations / count),
    min,
    p50: percentile(50),
    p90: percentile(90),
    p95: percentile(95),
    p99: percentile(99),
    max,
  };
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
