import type { Clock } from '../clock/clock.js';
import type { Milliseconds } from '../types/time.js';

/**
 * How close to an instant the waiter stops sleeping on a timer and starts yielding turn by turn. Node's timers have
 * millisecond granularity and fire up to a millisecond or more late, so a timer alone would send every request late;
 * yielding through `setImmediate` lets sockets and streams run between checks, so only the last stretch costs CPU.
 */
const TIMER_MARGIN_MS: Milliseconds = 1.5;

/**
 * Waits for absolute instants on a real-time clock: a timer for the bulk of the wait, then a short precise tail.
 * Instants are absolute, so a timer that fires late makes this wait shorter, never the next one later. An abort
 * wakes the wait at once.
 */
export class PreciseWaiter {
  readonly #clock: Clock;
  readonly #signal: AbortSignal | undefined;
  #wake: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(clock: Clock, signal?: AbortSignal) {
    this.#clock = clock;
    this.#signal = signal;
    signal?.addEventListener('abort', () => this.#wakeNow(), { once: true });
  }

  /** Resolves at `targetMs` on the clock (or just after), or as soon as the signal aborts. */
  async waitUntil(targetMs: Milliseconds): Promise<void> {
    for (;;) {
      if (this.#signal?.aborted === true) return;
      const remainingMs = targetMs - this.#clock.nowMs();
      if (remainingMs <= 0) return;
      if (remainingMs > TIMER_MARGIN_MS) await this.#sleep(remainingMs - TIMER_MARGIN_MS);
      else await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  #sleep(durationMs: Milliseconds): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#wake = resolve;
      this.#timer = setTimeout(() => this.#wakeNow(), Math.floor(durationMs));
    });
  }

  #wakeNow(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
