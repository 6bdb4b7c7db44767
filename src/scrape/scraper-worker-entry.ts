/**
 * The scraper's worker thread: polls the `/metrics` endpoints and parses their text off the client's event loop (on
 * the main thread, parsing five endpoints' text twice a second was the client's longest work while arrivals ran, and
 * doubled its event-loop delay p99 in the demo). It says `ready` once its first scrapes have answered (the thread's
 * start-up, loading the HTTP client included, is then over). Each scrape is appended to the partial file as it comes,
 * so the thread holds no samples; on any message it stops and says how many rows it wrote.
 *
 * Its clock is the main thread's: the same `performance.now()` scale (converted through both threads' time origins)
 * and the same epoch anchor, so sample times line up with the records as they did on the main thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Clock } from '../types/clock.js';
import { startScraper } from './scraper.js';
import { ServerMetricsSpool } from './server-metrics-spool.js';
import type { FromScraperWorker, ScraperWorkerData } from './scraper-worker-data.js';

const data = workerData as ScraperWorkerData;
const toMainMs = performance.timeOrigin - data.mainTimeOrigin;
const clock: Clock = {
  nowMs: () => toMainMs + performance.now(),
  nowEpochSeconds: () => (data.epochAtMainZeroMs + toMainMs + performance.now()) / 1000,
  toEpochSeconds: (monotonicMs) => (data.epochAtMainZeroMs + monotonicMs) / 1000,
};
const spool = new ServerMetricsSpool(data.partialPath);
const scraper = startScraper({ urls: data.urls, clock, intervalMs: data.intervalMs, onSample: (sample) => spool.append(sample) });
const port = parentPort;
if (port !== null) {
  void scraper.firstRound.then(() => port.postMessage({ type: 'ready' } satisfies FromScraperWorker));
  port.once('message', () => {
    void scraper.stop().then(() => {
      spool.close();
      const message: FromScraperWorker = { type: 'stopped', rows: spool.rows };
      if (spool.failure !== undefined) message.appendFailure = spool.failure;
      port.postMessage(message);
    });
  });
}
