/**
 * Every k-th element, k chosen so that at most `maxCount` remain (all of them when there are fewer). Records come in
 * arrival order, so a stride sample spreads evenly over the run: what a chart of a million requests needs.
 */
export function strideSample<T>(items: readonly T[], maxCount: number): readonly T[] {
  if (items.length <= maxCount) return items;
  const stride = Math.ceil(items.length / maxCount);
  const sample: T[] = [];
  for (let index = 0; index < items.length; index += stride) sample.push(items[index] as T);
  return sample;
}

/** A point of an empirical CDF: the fraction of values ≤ `value`. */
export interface CdfPoint {
  value: number;
  fraction: number;
}

/**
 * The empirical CDF of the finite values, thinned to about `maxPoints` points (every k-th order statistic, plus the
 * maximum), for charts: a million latencies draw the same curve as three hundred well-chosen ones.
 */
export function empiricalCdf(values: ArrayLike<number>, maxPoints = 400): CdfPoint[] {
  const finite = new Float64Array(values.length);
  let count = 0;
  for (let index = 0; index < values.length; index++) {
    const value = values[index] as number;
    if (Number.isFinite(value)) finite[count++] = value;
  }
  if (count === 0) return [];
  const sorted = finite.subarray(0, count).sort();
  const step = Math.max(1, Math.floor(count / maxPoints));
  const points: CdfPoint[] = [];
  for (let index = 0; index < count; index += step) points.push({ value: sorted[index] as number, fraction: (index + 1) / count });
  points.push({ value: sorted[count - 1] as number, fraction: 1 });
  return points;
}
