import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { readsPerformanceNow } from '../clock/clock.js';
import type { Clock } from '../clock/clock.js';
import { sampleToJsonLine, startScraper, type Sample } from '../scrape/scraper.js';
import type { FromScraperWorker, ScraperWorkerData } from '../scrape/scraper-worker-data.js';
import { SERVER_METRICS_JSONL } from '../scrape/server-metrics-file.js';
import type { EpochSeconds } from '../types/time.js';
import { writeFileAtomic } from '../utils/atomic-write.js';
import { workerScript } from '../utils/worker-script.js';

const SCRAPE_INTERVAL_MS = 500;

/**
 * Polls the servers' (and router's) `/metrics` during a run on the run's clock, and writes `server-metrics.jsonl`
 * with times relative to the run's `t0` — known only once the measured load starts, hence written at the end.
 *
 * The polling runs on a worker thread, away from the event loop that sends requests and times their tokens; on this
 * thread only where no worker can run (a clock that does not read `performance.now()`, such as a test's manual clock,
 * or sources that are not built). Resolves once the first scrapes have answered: the thread's start-up (a few hundred
 * ms of CPU) is then over, and does not compete with the first arrivals for a core.
 */
export async function collectServerMetrics(metricsUrls: string[], clock: Clock): Promise<{ finish(t0: EpochSeconds, outputDirectory: string): Promise<number> }> {
  const stop = metricsUrls.length === 0 ? undefined : await startPolling(metricsUrls, clock);
  return {
    async finish(t0, outputDirectory) {
      if (stop === undefined) return 0;
      const samples = await stop();
      await writeFileAtomic(join(outputDirectory, SERVER_METRICS_JSONL), samples.map((sample) => sampleToJsonLine(sample, t0)));
      return samples.length;
    },
  };
}

async function startPolling(urls: string[], clock: Clock): Promise<() => Promise<Sample[]>> {
  const script = workerScript(import.meta.url, '../scrape/scraper-worker-entry.js').path;
  if (script === null || !readsPerformanceNow(clock)) {
    const scraper = startScraper({ urls, clock, intervalMs: SCRAPE_INTERVAL_MS });
    await scraper.firstRound;
    return () => scraper.stop();
  }
  const data: ScraperWorkerData = { urls, intervalMs: SCRAPE_INTERVAL_MS, epochAtMainZeroMs: clock.toEpochSeconds(0) * 1000, mainTimeOrigin: performance.timeOrigin };
  const worker = new Worker(script, { workerData: data });
  // Like the scraper's own timer, the thread never keeps a finished (or failed) run's process alive.
  worker.unref();
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const samples = new Promise<Sample[]>((resolve, reject) => {
    worker.on('message', (message: FromScraperWorker) => {
      if (message.type === 'ready') markReady();
      else resolve(message.samples);
    });
    // A thread that fails is reported when the samples are asked for; the run does not wait on it meanwhile.
    worker.once('error', (error) => reject(new Error(`the scraper thread failed: ${error.message}`, { cause: error })));
    worker.once('exit', (code) => reject(new Error(`the scraper thread stopped (exit code ${code}) before it sent its samples`)));
  });
  samples.catch(() => undefined);
  await Promise.race([ready, samples.then(() => undefined, () => undefined)]);
  return async () => {
    worker.postMessage('stop');
    try {
      return await samples;
    } finally {
      await worker.terminate();
    }
  };
}
