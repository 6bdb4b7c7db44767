import { join } from 'node:path';
import type { Clock } from '../clock/clock.js';
import { sampleToJsonLine, startScraper, type Scraper } from '../scrape/scraper.js';
import { SERVER_METRICS_JSONL } from '../scrape/server-metrics-file.js';
import type { EpochSeconds } from '../types/time.js';
import { writeFileAtomic } from '../utils/atomic-write.js';

/**
 * Polls the servers' (and router's) `/metrics` during a run on the run's clock, and writes `server-metrics.jsonl`
 * with times relative to the run's `t0` — known only once the measured load starts, hence written at the end.
 */
export function collectServerMetrics(metricsUrls: string[], clock: Clock): { finish(t0: EpochSeconds, outputDirectory: string): Promise<number> } {
  const scraper: Scraper | undefined = metricsUrls.length === 0 ? undefined : startScraper({ urls: metricsUrls, clock, intervalMs: 500 });
  return {
    async finish(t0, outputDirectory) {
      if (scraper === undefined) return 0;
      const samples = await scraper.stop();
      await writeFileAtomic(join(outputDirectory, SERVER_METRICS_JSONL), samples.map((sample) => sampleToJsonLine(sample, t0)));
      return samples.length;
    },
  };
}
