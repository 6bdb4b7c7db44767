import type { Milliseconds } from '../types/time.js';

/**
 * `maxConcurrency`: arrivals beyond the cap wait in arrival order for a free slot, keeping their scheduled instants
 * (so the wait shows as send lag, and the record says it was held).
 */
export class ConcurrencyCap {
  readonly #maxConcurrency: number;
  /** Scheduled instant of each held request (by request index). */
  readonly #scheduledMs: Float64Array;
  readonly #queue: number[] = [];
  #head = 0;

  constructor(maxConcurrency: number, requestCount: number) {
    this.#maxConcurrency = maxConcurrency;
    this.#scheduledMs = new Float64Array(requestCount).fill(Number.NaN);
  }

  /** Whether a request may go out now with `inFlight` requests already out. */
  admits(inFlight: number): boolean {
    return inFlight < this.#maxConcurrency && this.#head >= this.#queue.length;
  }

  hold(index: number, scheduledMs: Milliseconds): void {
    this.#scheduledMs[index] = scheduledMs;
    this.#queue.push(index);
  }

  get waiting(): number {
    return this.#queue.length - this.#head;
  }

  /** Releases the longest-waiting held requests while slots are free (`send` raises the count it is given). */
  release(inFlight: () => number, send: (index: number, scheduledMs: Milliseconds) => void): void {
    while (this.#head < this.#queue.length && inFlight() < this.#maxConcurrency) {
      const index = this.#queue[this.#head++] as number;
      send(index, this.#scheduledMs[index] as number);
    }
  }

  /** Empties the queue (an interrupted run: these will never be sent). */
  drain(each: (index: number, scheduledMs: Milliseconds) => void): void {
    while (this.#head < this.#queue.length) {
      const index = this.#queue[this.#head++] as number;
      each(index, this.#scheduledMs[index] as number);
    }
  }
}
