import type { Clock } from '../types/clock.js';
import type { EpochSeconds, Milliseconds } from '../types/time.js';

export type { Clock } from '../types/clock.js';

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
