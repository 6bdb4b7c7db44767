import type { Milliseconds } from '../../types/time.js';

const BUCKET_MS = 0.05;
const BUCKETS = 2000; // up to 100 ms; later completions land in the last bucket (the maximum is kept exactly).

/**
 * How late the real-time driver completes each step against the model timeline: the measure of whether one
 * sim-server process keeps up with its load (target: step timing within 1 ms of the model). A fixed histogram keeps
 * this O(1) per step and bounded in memory.
 */
export class StepLateness {
  readonly #counts = new Uint32Array(BUCKETS);
  #steps = 0;
  #maxMs = 0;
  #reanchors = 0;

  record(latenessMs: Milliseconds): void {
    const clamped = Math.max(0, latenessMs);
    this.#counts[Math.min(BUCKETS - 1, Math.floor(clamped / BUCKET_MS))]! += 1;
    this.#steps++;
    if (clamped > this.#maxMs) this.#maxMs = clamped;
  }

  /** The driver fell so far behind that it restarted the timeline at the wall clock. */
  recordReanchor(): void {
    this.#reanchors++;
  }

  reset(): void {
    this.#counts.fill(0);
    this.#steps = 0;
    this.#maxMs = 0;
    this.#reanchors = 0;
  }

  /** Percentiles are bucket upper bounds (0.05 ms resolution). */
  snapshot(): { steps: number; p50Ms: number; p99Ms: number; maxMs: number; reanchors: number } {
    return { steps: this.#steps, p50Ms: this.#quantile(0.5), p99Ms: this.#quantile(0.99), maxMs: this.#maxMs, reanchors: this.#reanchors };
  }

  #quantile(fraction: number): number {
    if (this.#steps === 0) return 0;
    const rank = Math.ceil(fraction * this.#steps);
    let seen = 0;
    for (let bucket = 0; bucket < BUCKETS; bucket++) {
      seen += this.#counts[bucket] as number;
      if (seen >= rank) return Math.min((bucket + 1) * BUCKET_MS, this.#maxMs);
    }
    return this.#maxMs;
  }
}
