import type { Milliseconds } from '../types/time.js';

/** How much disk a run's scraped metrics may take (server-metrics.csv, all its nodes together). */
export interface ScrapeBudgetLimits {
  /** The interval when the rows are small: every scrape is written at this pace. */
  baseIntervalMs: Milliseconds;
  /** Bytes per hour the rows may grow by until the cap; the interval backs off to keep under it. */
  bytesPerHour: number;
  /**
   * Bytes that may be written ahead of the rate (at the start, or after a quiet stretch): a run of a few minutes keeps
   * every scrape. Past the cap, the allowance shrinks with the rate.
   */
  burstBytes: number;
  /** Once the table holds this many bytes, it grows by `bytesPerHourAfterCap` only (and a notice says so). */
  capBytes: number;
  bytesPerHourAfterCap: number;
}

/**
 * servelab's defaults: 100 MB an hour, 10 MB ahead, and 1 GB a run, then 10 MB an hour. A default SGLang page
 * written whole is 33 KiB a scrape (bench/server-metrics-size.ts): under load, one server is scraped every 500 ms for
 * its first ~4 minutes and every ~1.2 s after; four, for their first ~40 s and every ~4.8 s after. Idle, only the
 * scrape rows are written and every scrape is kept at 500 ms. A 24-hour soak run stays under 1.2 GB of table, however
 * many servers it has, where before it took 5.8 GB a server.
 */
export const DEFAULT_SCRAPE_BUDGET: ScrapeBudgetLimits = {
  baseIntervalMs: 500,
  bytesPerHour: 100e6,
  burstBytes: 10e6,
  capBytes: 1e9,
  bytesPerHourAfterCap: 10e6,
};

/**
 * The budget for `mbPerHour` MB an hour (`--server-metrics-mb-per-hour`): the defaults' shape scaled with the rate —
 * a tenth of an hour's rate ahead (6 minutes), and a tenth of the rate past the 1 GB cap.
 */
export function scrapeBudgetForRate(mbPerHour: number): ScrapeBudgetLimits {
  const bytesPerHour = mbPerHour * 1e6;
  return { ...DEFAULT_SCRAPE_BUDGET, bytesPerHour, burstBytes: bytesPerHour / 10, bytesPerHourAfterCap: bytesPerHour / 10 };
}

const MS_PER_HOUR = 3_600_000;

/**
 * Paces the scraping so that what it writes stays under a rate, and under a lower rate past a cap: a token bucket
 * filled at the rate up to `burstBytes`, emptied by every byte written; when a round leaves it short, the next round
 * waits until the rate has refilled the shortfall. So any stretch of the run holds at most `rate × its length` plus
 * the burst and the rows of the round in flight at its end, whatever the pages weigh or how many servers there are;
 * and nothing is dropped: the samples get coarser, never stop.
 */
export class ScrapeBudget {
  readonly limits: ScrapeBudgetLimits;
  readonly #onCapReached: ((message: string) => void) | undefined;
  #totalBytes = 0;
  /** Bytes that may still be written without waiting (negative: owed); filled at the rate up to the burst. */
  #allowanceBytes: number;
  #filledAtMs: Milliseconds | undefined;
  #capReached = false;

  constructor(limits: ScrapeBudgetLimits, onCapReached?: (message: string) => void) {
    this.limits = limits;
    this.#onCapReached = onCapReached;
    this.#allowanceBytes = limits.burstBytes;
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
    this.#allowanceBytes -= bytes;
    if (this.#capReached || this.#totalBytes < this.limits.capBytes) return;
    this.#capReached = true;
    this.#onCapReached?.(
      `the server metrics reached their cap of ${megabytes(this.limits.capBytes)}: from now on they grow by at most ` +
        `${megabytes(this.limits.bytesPerHourAfterCap)} an hour (scraped less often), and the latest samples are still kept`,
    );
  }

  /** The wait from this round to the next, asked as a round starts, at `nowMs` on the run's clock. */
  nextIntervalMs(nowMs: Milliseconds): Milliseconds {
    const bytesPerMs = (this.#capReached ? this.limits.bytesPerHourAfterCap : this.limits.bytesPerHour) / MS_PER_HOUR;
    if (this.#filledAtMs !== undefined) {
      this.#allowanceBytes = Math.min(this.#burstBytes(), this.#allowanceBytes + (nowMs - this.#filledAtMs) * bytesPerMs);
    }
    this.#filledAtMs = nowMs;
    return Math.max(this.limits.baseIntervalMs, -this.#allowanceBytes / bytesPerMs);
  }

  #burstBytes(): number {
    return this.#capReached ? (this.limits.burstBytes * this.limits.bytesPerHourAfterCap) / this.limits.bytesPerHour : this.limits.burstBytes;
  }
}

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toLocaleString('en-US', { maximumFractionDigits: 1 })} MB`;
}
