import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { readsPerformanceNow } from '../clock/clock.js';
import type { Clock } from '../clock/clock.js';
import { DEFAULT_SCRAPE_BUDGET, type ScrapeBudgetLimits } from '../scrape/scrape-budget.js';
import type { FromScraperWorker, ScraperWorkerData } from '../scrape/scraper-worker-data.js';
import { finishServerMetricsTable } from '../scrape/server-metrics-file.js';
import { SERVER_METRICS_CSV, SERVER_METRICS_PARTIAL } from '../scrape/server-metrics-rows.js';
import { startSpooledScraper } from '../scrape/spooled-scraper.js';
import type { RunNotice } from '../types/run.js';
import type { EpochSeconds } from '../types/time.js';
import { workerScript } from '../utils/worker-script.js';

export interface ServerMetricsOptions {
  /** The run directory: scrapes are appended to its partial file as they come, and server-metrics.csv ends there. */
  directory: string;
  /**
   * Told at once when scraping stops early (the thread died, the disk filled: what was scraped before is kept) and
   * when the table reaches its cap (scraping goes on, less often).
   */
  onNotice?: (notice: RunNotice) => void;
  /** How much disk the table may take, which paces the scraping; DEFAULT_SCRAPE_BUDGET when absent. */
  budget?: ScrapeBudgetLimits;
  /** A heap limit for the scraper's thread (MB); Node's default when absent. */
  maxOldGenerationSizeMb?: number;
}

export interface ServerMetricsCollection {
  /** Stops scraping and writes server-metrics.csv with times after `t0`; returns its rows. */
  finish(t0: EpochSeconds): Promise<number>;
  /**
   * Stops scraping without writing the table, for a run that ends in an error before its t0 is of use: the partial
   * file stays for `servelab report`. Nothing after `finish`.
   */
  stop(): Promise<void>;
}

/**
 * Polls the servers' (and router's) `/metrics` during a run on the run's clock. Every scrape goes to disk as it comes
 * (the partial file), so memory stays flat over a run of hours and a scraper that fails keeps everything it scraped;
 * only what changed is written, at a pace that keeps the file under its budget (ScrapeBudget: 100 MB an hour, 1 GB a
 * run, by default), so a run of days cannot fill the disk with it. At the end the partial file becomes
 * server-metrics.csv, with times relative to the run's `t0` (known only once the measured load starts, after the first
 * scrapes).
 *
 * The polling runs on a worker thread, away from the event loop that sends requests and times their tokens; on this
 * thread only where no worker can run (a clock that does not read `performance.now()`, such as a test's manual clock,
 * or sources that are not built). Resolves once the first scrapes have answered: the thread's start-up (a few hundred
 * ms of CPU) is then over, and does not compete with the first arrivals for a core.
 */
export async function collectServerMetrics(metricsUrls: string[], clock: Clock, options: ServerMetricsOptions): Promise<ServerMetricsCollection> {
  const partialPath = join(options.directory, SERVER_METRICS_PARTIAL);
  const startStop = metricsUrls.length === 0 ? undefined : await startPolling(metricsUrls, clock, partialPath, options);
  // Once: finish and stop may both be called (stop from a run's cleanup).
  let stopping: Promise<void> | undefined;
  const stop = startStop === undefined ? undefined : () => (stopping ??= startStop());
  return {
    async stop() {
      await stop?.();
    },
    async finish(t0) {
      if (stop === undefined) return 0;
      await stop();
      return finishServerMetricsTable(options.directory, t0);
    },
  };
}

/** Starts the scraper; the function it returns stops it. */
async function startPolling(urls: string[], clock: Clock, partialPath: string, options: ServerMetricsOptions): Promise<() => Promise<void>> {
  const budget = options.budget ?? DEFAULT_SCRAPE_BUDGET;
  const script = workerScript(import.meta.url, '../scrape/scraper-worker-entry.js').path;
  if (script === null || !readsPerformanceNow(clock)) {
    const notify = (message: string): void => options.onNotice?.({ source: 'scraper', message, time: clock.nowEpochSeconds() });
    const { scraper, spool } = startSpooledScraper({ urls, clock, partialPath, budget, notify });
    await scraper.firstRound;
    return async () => {
      await scraper.stop();
      spool.close();
    };
  }
  const data: ScraperWorkerData = { urls, budget, partialPath, epochAtMainZeroMs: clock.toEpochSeconds(0) * 1000, mainTimeOrigin: performance.timeOrigin };
  const worker = new Worker(script, {
    workerData: data,
    ...(options.maxOldGenerationSizeMb === undefined ? {} : { resourceLimits: { maxOldGenerationSizeMb: options.maxOldGenerationSizeMb } }),
  });
  // Like the scraper's own timer, the thread never keeps a finished (or failed) run's process alive.
  worker.unref();
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  let failed = false;
  // A thread that dies mid-run is a notice at once; what it appended before is on disk and goes into the table.
  const failure = (reason: string): void => {
    if (failed) return;
    failed = true;
    markReady();
    options.onNotice?.({
      source: 'scraper',
      message: `the metrics scraper thread stopped (${reason}): ${SERVER_METRICS_CSV} holds what it scraped until then and nothing after`,
      time: clock.nowEpochSeconds(),
    });
  };
  const stopped = new Promise<void>((resolve) => {
    worker.on('message', (message: FromScraperWorker) => {
      if (message.type === 'ready') {
        markReady();
        return;
      }
      if (message.type === 'notice') {
        options.onNotice?.({ source: 'scraper', message: message.message, time: message.time });
        return;
      }
      // Its thread exits next: that is the end of a finished scrape, not a failure.
      failed = true;
      resolve();
    });
    worker.once('error', (error) => {
      failure((error as NodeJS.ErrnoException).code ?? error.message);
      resolve();
    });
    worker.once('exit', (code) => {
      failure(`exit code ${code}`);
      resolve();
    });
  });
  await ready;
  return async () => {
    if (!failed) worker.postMessage('stop');
    try {
      await stopped;
    } finally {
      failed = true;
      await worker.terminate();
    }
  };
}
