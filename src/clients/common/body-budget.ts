/**
 * The bytes of answers one client holds at once, across all its requests in flight: non-streamed bodies being read and
 * the partial lines and events of streams. Each answer has its own cap (maxBodyBytes, maxSseEventBytes), but twenty
 * answers just under a 128 MiB cap took 2.7 GB together; past this budget the request that would pass it fails as
 * `harness_limit` (servelab's own memory, not the server's fault) instead of the process running out of memory.
 */
export class BodyBudget {
  readonly limitBytes: number;
  #heldBytes = 0;

  constructor(limitBytes: number) {
    this.limitBytes = limitBytes;
  }

  get heldBytes(): number {
    return this.#heldBytes;
  }

  /** Takes `bytes` more; false (nothing taken) when that would pass the budget. */
  take(bytes: number): boolean {
    if (this.#heldBytes + bytes > this.limitBytes) return false;
    this.#heldBytes += bytes;
    return true;
  }

  give(bytes: number): void {
    this.#heldBytes = Math.max(0, this.#heldBytes - bytes);
  }
}

/**
 * The default budget: 1 GiB, eight answers at the default 128 MiB body cap, and far above what a run of normal answers
 * holds at once (a thousand streams in flight hold a few kilobytes each).
 */
export const DEFAULT_MAX_IN_FLIGHT_BODY_BYTES = 2 ** 30;
