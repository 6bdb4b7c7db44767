import type { ArrivalDraw, ArrivalSettings } from '../../types/workload-settings.js';
import type { SeededRandom } from '../../utils/random.js';

/**
 * An arrival process: turns settings into an absolute schedule. Each entry is one request's offset in milliseconds
 * from the schedule origin `t0`, non-decreasing. Offsets are absolute (cumulative), never "sleep this long after the
 * previous send", so a late timer in the load generator can never push later arrivals back.
 */
export interface ArrivalProcess {
  readonly name: string;
  createOffsetsMs(settings: ArrivalSettings, count: number, random: SeededRandom): Float64Array;
  /**
   * The process's gaps at rate 1 (mean 1), for schedules whose rate changes over time (stages): the gaps are laid out
   * in time rescaled by the cumulative rate. Absent for processes that set their own times (trace).
   */
  unitGaps?(settings: ArrivalSettings, random: SeededRandom): () => number;
}

/** Builds offsets from i.i.d. gaps in seconds: the first request arrives at 0, each next one a gap later. */
export function offsetsFromGaps(count: number, nextGapSeconds: () => number): Float64Array {
  const offsetsMs = new Float64Array(count);
  let offsetMs = 0;
  for (let index = 1; index < count; index++) {
    offsetMs += nextGapSeconds() * 1000;
    offsetsMs[index] = offsetMs;
  }
  return offsetsMs;
}

/**
 * Builds offsets from i.i.d. gaps rescaled so that they sum to exactly (count − 1) / rate: the first request at 0, the
 * last at (count − 1) / rate, so the schedule's rate, (count − 1) / span, is the target whatever the draw. The gaps are
 * the i.i.d. gaps conditioned on their sum. For exponential gaps that is exactly a Poisson process conditioned on
 * arrivals at both ends of the span (the count − 2 instants between are sorted uniforms); for gamma gaps of shape k
 * each gap / span follows Beta(k, (count − 2)·k): the mean gap is 1 / rate exactly and the gaps' CV is
 * sqrt((count − 2) / ((count − 1)·k + 1)), which tends to the unconditioned 1 / sqrt(k) as count grows.
 */
export function offsetsFromRescaledGaps(count: number, rate: number, nextGapSeconds: () => number): Float64Array {
  const offsetsMs = offsetsFromGaps(count, nextGapSeconds);
  if (count < 2) return offsetsMs;
  const drawnSpanMs = offsetsMs[count - 1] as number;
  const spanMs = ((count - 1) * 1000) / rate;
  // A draw whose every gap is 0 (possible only in theory) cannot be rescaled: spread it evenly instead.
  const scale = drawnSpanMs > 0 ? spanMs / drawnSpanMs : 0;
  for (let index = 1; index < count - 1; index++) {
    offsetsMs[index] = scale > 0 ? Math.min((offsetsMs[index] as number) * scale, spanMs) : (index * spanMs) / (count - 1);
  }
  offsetsMs[count - 1] = spanMs;
  return offsetsMs;
}

/** Offsets from i.i.d. gaps, conditioned on their sum or not, as `draw` says (default conditioned). */
export function offsetsFromDraw(draw: ArrivalDraw | undefined, count: number, rate: number, nextGapSeconds: () => number): Float64Array {
  return draw === 'independent' ? offsetsFromGaps(count, nextGapSeconds) : offsetsFromRescaledGaps(count, rate, nextGapSeconds);
}
