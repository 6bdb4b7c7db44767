import type { EpochSeconds } from '../types/time.js';
import type { ScrapeBudgetLimits } from './scrape-budget.js';

/** What the scraper's worker thread is started with. */
export interface ScraperWorkerData {
  urls: string[];
  /** How much disk the scraped rows may take, which paces the scraping (ScrapeBudget). */
  budget: ScrapeBudgetLimits;
  /** The partial file every scrape is appended to as it comes (ServerMetricsSpool). */
  partialPath: string;
  /** The main thread's clock: the epoch (ms) at its `nowMs()` zero, and its `performance.timeOrigin`. */
  epochAtMainZeroMs: number;
  mainTimeOrigin: number;
}

/**
 * What the scraper's worker thread sends: `ready` after its first scrapes; `notice` at once when appending stops (a
 * full disk) or the table reaches its cap, stamped on the run's clock; when told to stop, `stopped` with how many
 * rows it appended.
 */
export type FromScraperWorker = { type: 'ready' } | { type: 'notice'; message: string; time: EpochSeconds } | { type: 'stopped'; rows: number };
