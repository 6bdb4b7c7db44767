import type { ArrivalSettings } from '../../types/workload-settings.js';
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
