import type { Milliseconds } from '../types/time.js';

/** How much disk a run's scraped metrics may take (server-metrics.csv, all its nodes together). */
export interface ScrapeBudgetLimits {
  /** The interval when the rows are small: every scrape is written at this pace. */
  baseIntervalMs: Milliseconds;
  /** Bytes per hour the rows may grow by until the cap; the interval backs off to keep under it. */
  bytesPerHour: number;
  /** Once the table holds this many bytes, it grows by `bytesPerHourAfterCap` only (and a notice says so). */
  capBytes: number;
  bytesPerHourAfterCap: number;
}

/**
 * servelab's defaults: 100 MB an hour and 1 GB a run, then 10 MB an hour. A default SGLang page written whole is
 * 33 KiB a scrape (bench/server-metrics-size.ts), so under load one server is scraped every ~1.2 s and four every
 * ~5 s; idle, only the scrape rows are written and every scrape is kept at 0.5 s. A 24-hour soak run stays under
 * 1.2 GB of table rather than the 5.8 GB a server it took before.
 */
export const DEFAULT_SCRAPE_BUDGET: ScrapeBudgetLimits = {
  baseIntervalMs: 500,
  bytesPerHour: 100e6,
  capBytes: 1e9,
  bytesPerHourAfterCap: 10e6,
};

const MS_PER_HOUR = 3_600_000;

/**
 * Paces the scraping so that what it writes stays under a rate, and under a lower rate past a cap: after each round
 * the next waits at least as long as the bytes written since the round before take at that rate. So any stretch of
 * the run holds at most `rate × its length` plus the rows of the round or two in flight at its edges, whatever the
 * pages weigh or how many servers there are, and nothing is dropped: the samples get coarser, never stop.
 */
export class ScrapeBudget {
  readonly limits: ScrapeBudgetLimits;
  readonly #onCapReached: ((message: string) => void) | undefined;
  #totalBytes = 0;
  #bytesSinceTick = 0;
  #capReached = false;

  constructor(limits: ScrapeBudgetLimits, onCapReached?: (message: string) => void) {
    this.limits = limits;
    this.#onCapReached = onCapReached;
  }

  get totalBytes(): number {
    return this.#totalBytes;
  }

  get capReached(): boolean {
    return this.#capReached;
  }

  /** Counts bytes written to the table. */
  record(bytes: number): void {
    this.#totalBytes += bytes;
    this.#bytesSinceTick += bytes;
    if (this.#capReached || this.#totalBytes < this.limits.capBytes) return;
    this.#capReached = true;
    this.#onCapReached?.(
      `the server metrics reached their cap of ${megabytes(this.limits.capBytes)}: from now on they grow by at most ` +
        `${megabytes(this.limits.bytesPerHourAfterCap)} an hour (scraped less often), and the latest samples are still kept`,
    );
  }

  /** The wait from this round to the next: called once per round, as it starts. */
  nextIntervalMs(): Milliseconds {
    const bytesPerHour = this.#capReached ? this.limits.bytesPerHourAfterCap : this.limits.bytesPerHour;
    const intervalMs = (this.#bytesSinceTick / bytesPerHour) * MS_PER_HOUR;
    this.#bytesSinceTick = 0;
    return Math.max(this.limits.baseIntervalMs, intervalMs);
  }
}

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toLocaleString('en-US', { maximumFractionDigits: 1 })} MB`;
}
