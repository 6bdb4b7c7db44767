import type { EpochSeconds, Milliseconds } from '../types/time.js';

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

/**
 * The real clock: `performance.now()` anchored to the epoch through `performance.timeOrigin`.
 *
 * The anchor is fixed when the process starts, so every reading in one run shares one offset to the epoch, and
 * differences between client readings are exact monotonic intervals even if the wall clock is stepped mid-run.
 */
export const systemClock: Clock = {
  nowMs: () => performance.now(),
  nowEpochSeconds: () => (performance.timeOrigin + performance.now()) / 1000,
  toEpochSeconds: (monotonicMs) => (performance.timeOrigin + monotonicMs) / 1000,
};

/** A clock that moves only when told to: for timing logic in tests and for virtual time. */
export class ManualClock implements Clock {
  #nowMs: Milliseconds;
  readonly #epochOriginMs: Milliseconds;

  constructor(startMs: Milliseconds = 0, epochOriginMs: Milliseconds = 1_700_000_000_000) {
    this.#nowMs = startMs;
    this.#epochOriginMs = epochOriginMs;
  }

  nowMs(): Milliseconds {
    return this.#nowMs;
  }

  nowEpochSeconds(): EpochSeconds {
    return this.toEpochSeconds(this.#nowMs);
  }

  toEpochSeconds(monotonicMs: Milliseconds): EpochSeconds {
    return (this.#epochOriginMs + monotonicMs) / 1000;
  }

  advanceBy(durationMs: Milliseconds): void {
    if (durationMs < 0) throw new RangeError('a clock cannot move backwards');
    this.#nowMs += durationMs;
  }

  setTo(monotonicMs: Milliseconds): void {
    if (monotonicMs < this.#nowMs) throw new RangeError('a clock cannot move backwards');
    this.#nowMs = monotonicMs;
  }
}
