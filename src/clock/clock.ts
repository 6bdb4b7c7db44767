import type { Clock } from '../types/clock.js';
import type { EpochSeconds, Milliseconds } from '../types/time.js';

export type { Clock } from '../types/clock.js';

/**
 * Epoch milliseconds at `performance.now()` zero, measured now.
 *
 * `Date.now()` is the wall clock but counts whole milliseconds, so the anchor is taken where it ticks over: the tick
 * lies between two consecutive readings of the monotonic clock, and the tightest of a few such brackets (a preempted
 * loop gives a wide one) fixes the anchor to tens of microseconds. Measured on this machine against CLOCK_REALTIME − CLOCK_MONOTONIC read by Python: this anchor
 * 0.03–0.05 ms off, `performance.timeOrigin + now()` 0.08–0.18 ms off. Costs a millisecond or two of spinning when the
 * machine is quiet, up to ~60 ms when it is so loaded that every edge it sees is preempted.
 */
export function measureEpochAnchorMs(): number {
  let bestWidthMs = Infinity;
  let bestAnchorMs = Date.now() - performance.now();
  // On a quiet machine the first edges are tight and end the search. On a loaded one a preempted loop brackets the
  // tick with milliseconds, which would put this process's epoch readings milliseconds off its neighbours' (a tap's
  // stamp before the client's arrival): while every edge seen is wider than half a millisecond, keep looking, for at
  // most ~60 ms.
  const searchEndMs = performance.now() + 60;
  for (let edge = 0; edge < 50 && bestWidthMs > (edge < 5 ? 0.02 : 0.5) && (edge < 5 || performance.now() < searchEndMs); edge++) {
    const startWallMs = Date.now();
    let previousMs = performance.now();
    const giveUpMs = previousMs + 3;
    for (;;) {
      const currentMs = performance.now();
      const wallMs = Date.now();
      if (wallMs !== startWallMs) {
        // Date.now() turned to wallMs after the previous iteration's reading and before this one's.
        if (currentMs - previousMs < bestWidthMs) {
          bestWidthMs = currentMs - previousMs;
          bestAnchorMs = wallMs - (previousMs + currentMs) / 2;
        }
        break;
      }
      if (currentMs > giveUpMs) break;
      previousMs = currentMs;
    }
  }
  return bestAnchorMs;
}

/** The clocks whose `nowMs()` is `performance.now()` (see readsPerformanceNow). */
const performanceClocks = new WeakSet<Clock>();

function clockAnchoredAt(epochAtMonotonicZeroMs: number): Clock {
  const clock: Clock = {
    nowMs: () => performance.now(),
    nowEpochSeconds: () => (epochAtMonotonicZeroMs + performance.now()) / 1000,
    toEpochSeconds: (monotonicMs) => (epochAtMonotonicZeroMs + monotonicMs) / 1000,
  };
  performanceClocks.add(clock);
  return clock;
}

/**
 * Whether the clock's monotonic readings are `performance.now()` (the system clock, and every run's anchored clock):
 * then another thread can wait for its instants on its own `performance.now()` (the pacer's timer thread does).
 */
export function readsPerformanceNow(clock: Clock): boolean {
  return performanceClocks.has(clock);
}

/**
 * The real clock: `performance.now()` anchored to the epoch once, when the process loads it (see measureEpochAnchorMs).
 *
 * Every reading of one process shares one offset to the epoch, so differences between readings are exact monotonic
 * intervals even if the wall clock is stepped mid-run.
 */
export const systemClock: Clock = clockAnchoredAt(measureEpochAnchorMs());

/**
 * A real clock anchored to the epoch now rather than when the process started: what each run uses, so that a wall
 * clock stepped (by NTP or by hand) between two runs of one process — a long sweep — moves no later run's times
 * against the servers' clocks. Within the run, readings stay monotonic intervals as with `systemClock`.
 */
export function anchoredSystemClock(): Clock {
  return clockAnchoredAt(measureEpochAnchorMs());
}

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
