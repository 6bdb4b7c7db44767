/**
 * The scraper's worker thread: polls the `/metrics` endpoints and parses their text off the client's event loop (on
 * the main thread, parsing five endpoints' text twice a second was the client's longest work while arrivals ran, and
 * doubled its event-loop delay p99 in the demo). It says `ready` once its first scrapes have answered (the thread's
 * start-up, loading the HTTP client included, is then over). Each scrape is appended to the partial file as it comes,
 * so the thread holds no samples, at the pace the rows' budget allows (ScrapeBudget); a full disk or the budget's cap
 * is a notice at once. On any message it stops and says how many rows it wrote.
 *
 * Its clock is the main thread's: the same `performance.now()` scale (converted through both threads' time origins)
 * and the same epoch anchor, so sample times line up with the records as they did on the main thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Clock } from '../types/clock.js';
import { startSpooledScraper } from './spooled-scraper.js';
import type { FromScraperWorker, ScraperWorkerData } from './scraper-worker-data.js';

const data = workerData as ScraperWorkerData;
const toMainMs = performance.timeOrigin - data.mainTimeOrigin;
const clock: Clock = {
  nowMs: () => toMainMs + performance.now(),
  nowEpochSeconds: () => (data.epochAtMainZeroMs + toMainMs + performance.now()) / 1000,
  toEpochSeconds: (monotonicMs) => (data.epochAtMainZeroMs + monotonicMs) / 1000,
};
const port = parentPort;
const notify = (message: string): void => port?.postMessage({ type: 'notice', message, time: clock.nowEpochSeconds() } satisfies FromScraperWorker);
const { scraper, spool } = startSpooledScraper({ urls: data.urls, clock, partialPath: data.partialPath, budget: data.budget, notify });
if (port !== null) {
  void scraper.firstRound.then(() => port.postMessage({ type: 'ready' } satisfies FromScraperWorker));
  port.once('message', () => {
    void scraper.stop().then(() => {
      spool.close();
      port.postMessage({ type: 'stopped', rows: spool.rows } satisfies FromScraperWorker);
    });
  });
}
