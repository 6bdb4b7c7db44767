import type { EpochSeconds, Seconds } from '../types/time.js';

/** Seconds after the run's t0; undefined stays undefined (an empty cell, never a guess). */
export function relativeSeconds(time: EpochSeconds | undefined, t0: EpochSeconds): Seconds | undefined {
  return time === undefined ? undefined : time - t0;
}

/** Rounds to the microsecond, the precision of every time written to a file. */
export function roundToMicroseconds(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
