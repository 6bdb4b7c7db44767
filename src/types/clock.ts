import type { EpochSeconds, Milliseconds } from './time.js';

/**
 * The clock every timing reading goes through, so tests can inject a controllable one.
 *
 * `nowMs` is monotonic (never jumps with NTP or a user changing the wall clock) and is what intervals and schedules use.
 * `nowEpochSeconds` is the same reading expressed on the epoch, so it can be compared with server timestamps.
 */
export interface Clock {
  nowMs(): Milliseconds;
  nowEpochSeconds(): EpochSeconds;
  /** Converts a `nowMs` reading to epoch seconds. */
  toEpochSeconds(monotonicMs: Milliseconds): EpochSeconds;
}
