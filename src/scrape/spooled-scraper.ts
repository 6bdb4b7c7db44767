import type { Clock } from '../types/clock.js';
import { ScrapeBudget, type ScrapeBudgetLimits } from './scrape-budget.js';
import { startScraper, type Scraper } from './scraper.js';
import { appendStoppedMessage } from './server-metrics-rows.js';
import { ServerMetricsSpool } from './server-metrics-spool.js';

export interface SpooledScraperOptions {
  urls: readonly string[];
  clock: Clock;
  /** The partial file of server-metrics.csv. */
  partialPath: string;
  budget: ScrapeBudgetLimits;
  /** Told at once, with a message for the run's notices, when appending stops (a full disk) or the cap is reached. */
  notify: (message: string) => void;
}

/**
 * A run's scraping: every scrape appended to the partial file as it comes (only what changed), at the pace the
 * rows' budget allows. The same on the scraper's worker thread and, where no worker can run, on the main thread.
 */
export function startSpooledScraper(options: SpooledScraperOptions): { scraper: Scraper; spool: ServerMetricsSpool } {
  const budget = new ScrapeBudget(options.budget, options.notify);
  const spool = new ServerMetricsSpool(options.partialPath, { budget, onFailure: (reason) => options.notify(appendStoppedMessage(reason)) });
  const scraper = startScraper({
    urls: options.urls,
    clock: options.clock,
    intervalMs: options.budget.baseIntervalMs,
    nextIntervalMs: () => budget.nextIntervalMs(options.clock.nowMs()),
    onSample: (sample) => spool.append(sample),
  });
  return { scraper, spool };
}
