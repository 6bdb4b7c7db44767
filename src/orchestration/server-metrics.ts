import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { readsPerformanceNow } from '../clock/clock.js';
import type { Clock } from '../clock/clock.js';
import { startScraper } from '../scrape/scraper.js';
import type { FromScraperWorker, ScraperWorkerData } from '../scrape/scraper-worker-data.js';
import { finishServerMetricsTable } from '../scrape/server-metrics-file.js';
import { SERVER_METRICS_CSV, SERVER_METRICS_PARTIAL } from '../scrape/server-metrics-rows.js';
import { ServerMetricsSpool } from '../scrape/server-metrics-spool.js';
import type { RunNotice } from '../types/run.js';
import type { EpochSeconds } from '../types/time.js';
import { workerScript } from '../utils/worker-script.js';

const SCRAPE_INTERVAL_MS = 500;

export interface ServerMetricsOptions {
  /** The run directory: scrapes are appended to its partial file as they come, and server-metrics.csv ends there. */
  directory: string;
  /** Told at once when scraping stops early (the thread died, the disk filled): what was scraped before is kept. */
  onNotice?: (notice: RunNotice) => void;
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
 * at the end the partial file becomes server-metrics.csv, with times relative to the run's `t0` (known only once the
 * measured load starts, after the first scrapes).
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
  let stopping: Promise<string | undefined> | undefined;
  const stop = startStop === undefined ? undefined : () => (stopping ??= startStop());
  return {
    async stop() {
      await stop?.();
    },
    async finish(t0) {
      if (stop === undefined) return 0;
      const appendFailure = await stop();
      if (appendFailure !== undefined) {
        options.onNotice?.({ source: 'scraper', message: `server metrics stopped being saved: ${appendFailure} (in ${SERVER_METRICS_CSV})`, time: clock.nowEpochSeconds() });
      }
      return finishServerMetricsTable(options.directory, t0);
    },
  };
}

/** Starts the scraper; the function it returns stops it and says why appending stopped early, if it did. */
async function startPolling(urls: string[], clock: Clock, partialPath: string, options: ServerMetricsOptions): Promise<() => Promise<string | undefined>> {
  const script = workerScript(import.meta.url, '../scrape/scraper-worker-entry.js').path;
  if (script === null || !readsPerformanceNow(clock)) {
    const spool = new ServerMetricsSpool(partialPath);
    const scraper = startScraper({ urls, clock, intervalMs: SCRAPE_INTERVAL_MS, onSample: (sample) => spool.append(sample) });
    await scraper.firstRound;
    return async () => {
      await scraper.stop();
      spool.close();
      return spool.failure;
    };
  }
  const data: ScraperWorkerData = { urls, intervalMs: SCRAPE_INTERVAL_MS, partialPath, epochAtMainZeroMs: clock.toEpochSeconds(0) * 1000, mainTimeOrigin: performance.timeOrigin };
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
  const stopped = new Promise<string | undefined>((resolve) => {
    worker.on('message', (message: FromScraperWorker) => {
      if (message.type === 'ready') {
        markReady();
        return;
      }
      // Its thread exits next: that is the end of a finished scrape, not a failure.
      failed = true;
      resolve(message.appendFailure);
    });
    worker.once('error', (error) => {
      failure((error as NodeJS.ErrnoException).code ?? error.message);
      resolve(undefined);
    });
    worker.once('exit', (code) => {
      failure(`exit code ${code}`);
      resolve(undefined);
    });
  });
  await ready;
  return async () => {
    if (!failed) worker.postMessage('stop');
    try {
      return await stopped;
    } finally {
      failed = true;
      await worker.terminate();
    }
  };
}
