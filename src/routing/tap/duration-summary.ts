import type { DurationSummary } from '../../types/routing.js';

/** Mean, median, 99th percentile (linear interpolation between closest ranks) and max of durations in ms. */
export function summarizeDurations(values: readonly number[]): DurationSummary {
  if (values.length === 0) return { count: 0, meanMs: 0, p50Ms: 0, p99Ms: 0, maxMs: 0 };
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    count: sorted.length,
    meanMs: sum / sorted.length,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    maxMs: sorted[sorted.length - 1] as number,
  };
}

function percentile(sorted: Float64Array, fraction: number): number {
  const rank = fraction * (sorted.length - 1);
  const lower = Math.floor(rank);
  const upper = Math.ceil(rank);
  const low = sorted[lower] as number;
  return low + ((sorted[upper] as number) - low) * (rank - lower);
}
