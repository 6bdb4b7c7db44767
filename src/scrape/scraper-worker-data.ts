import type { Milliseconds } from '../types/time.js';

/** What the scraper's worker thread is started with. */
export interface ScraperWorkerData {
  urls: string[];
  intervalMs: Milliseconds;
  /** The partial file every scrape is appended to as it comes (ServerMetricsSpool). */
  partialPath: string;
  /** The main thread's clock: the epoch (ms) at its `nowMs()` zero, and its `performance.timeOrigin`. */
  epochAtMainZeroMs: number;
  mainTimeOrigin: number;
}

/**
 * What the scraper's worker thread sends: `ready` after its first scrapes; when told to stop, `stopped` with how many
 * rows it appended and why appending stopped early, if it did (a full disk).
 */
export type FromScraperWorker = { type: 'ready' } | { type: 'stopped'; rows: number; appendFailure?: string };
