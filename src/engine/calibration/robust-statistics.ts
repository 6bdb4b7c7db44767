/** Statistics that one noisy sample cannot dominate: what calibration uses to turn repeated timings into one figure. */

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = values.slice().sort((left, right) => left - right);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** How far from the median, in scaled median absolute deviations, a sample may lie before it counts as an outlier. */
export const OUTLIER_MADS = 3.5;

/**
 * The median of the samples that lie within OUTLIER_MADS scaled median absolute deviations (1.4826 x MAD estimates
 * the standard deviation of normal noise) of the median, and how many were rejected. With fewer than three samples
 * nothing can be called an outlier, so the plain median is returned.
 */
export function robustMedian(values: readonly number[]): { value: number; rejected: number } {
  if (values.length < 3) return { value: median(values), rejected: 0 };
  const centre = median(values);
  const spread = 1.4826 * median(values.map((value) => Math.abs(value - centre)));
  // A zero spread (most samples identical) would reject every other sample: keep samples within 1% of the centre then.
  const limit = spread > 0 ? OUTLIER_MADS * spread : Math.abs(centre) * 0.01;
  const kept = values.filter((value) => Math.abs(value - centre) <= limit);
  return { value: median(kept), rejected: values.length - kept.length };
}

/** Root-mean-square and worst relative error of predictions against measurements, in percent. */
export function relativeErrors(pairs: readonly { measuredMs: number; predictedMs: number }[]): { rmsPercent: number; maxPercent: number } {
  if (pairs.length === 0) return { rmsPercent: Number.NaN, maxPercent: Number.NaN };
  const errors = pairs.map(({ measuredMs, predictedMs }) => (predictedMs - measuredMs) / measuredMs);
  return {
    rmsPercent: Math.sqrt(errors.reduce((sum, error) => sum + error * error, 0) / errors.length) * 100,
    maxPercent: Math.max(...errors.map((error) => Math.abs(error))) * 100,
  };
}

/** A repeat this much slower than the figure its point kept counts as a stall in `slowRepeats`. */
export const SLOW_REPEAT_FACTOR = 1.3;

/**
 * The points one of whose repeats took at least SLOW_REPEAT_FACTOR times the figure kept. The median keeps one stalled
 * repeat from moving a point, which is right for a one-off; a stall the server has again and again costs throughput
 * that no kept figure shows, so calibration names such points instead of hiding them. (On the real engine of
 * bench/real-engine they were the first sign of CUDA graphs captured while serving: one full-batch mixed step in five
 * took 1.5-2.5x its median until the harness captured every graph before serving.)
 */
export function slowRepeats<T extends { stepMs: number; samplesMs?: number[] }>(points: readonly T[]): T[] {
  return points.filter((point) => (point.samplesMs ?? []).some((sampleMs) => sampleMs >= point.stepMs * SLOW_REPEAT_FACTOR));
}

/**
 * True when a point has exactly two repeats and one took SLOW_REPEAT_FACTOR times the other or more. Their median is
 * their mean, so a stall in one would move the point by half of it (on the real engine of bench/real-engine, two repeats
 * of one full-batch mixed step took 157 and 275 ms, the second paying a graph captured on the spot, and the point was
 * kept at 216). A third repeat decides.
 */
export function repeatsDisagree(samplesMs: readonly number[]): boolean {
  if (samplesMs.length !== 2) return false;
  const [first, second] = samplesMs as [number, number];
  return Math.max(first, second) >= SLOW_REPEAT_FACTOR * Math.min(first, second);
}
