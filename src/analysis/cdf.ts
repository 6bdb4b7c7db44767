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
