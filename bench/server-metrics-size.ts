/**
 * What scraping a server's `/metrics` costs on disk: bytes of server-metrics.csv per scrape and per hour, for the
 * project's hand-made fixture page (test/fixtures/prometheus/sglang-metrics.txt, 25 series) and for a whole default
 * SGLang page (bench/sglang-metrics-page.ts: where it comes from is said there), loaded and idle.
 *
 *   npm run build && node dist/bench/server-metrics-size.js
 *
 * No timing: sizes only, the same on every machine.
 */
import { readFileSync } from 'node:fs';
import { parsePrometheusText } from '../src/scrape/prometheus-text.js';
import type { Sample } from '../src/scrape/scraper.js';
import { partialRows } from '../src/scrape/server-metrics-rows.js';
import { sglangMetricsPage } from './sglang-metrics-page.js';

const INTERVAL_MS = 500;
const NODE_URL = 'http://127.0.0.1:30001/metrics';
const scrapesPerHour = 3_600_000 / INTERVAL_MS;

function sample(index: number, text: string): Sample {
  return { time: 1_700_000_000 + index * 0.5, url: NODE_URL, ok: true, durationMs: 3.417, metrics: parsePrometheusText(text).samples };
}

function report(label: string, pages: (index: number) => string): void {
  const scrapes = 20;
  let bytes = 0;
  let series = 0;
  for (let index = 0; index < scrapes; index++) {
    const scraped = sample(index, pages(index));
    series = scraped.metrics.length;
    bytes += Buffer.byteLength(partialRows(scraped));
  }
  const perScrape = bytes / scrapes;
  process.stdout.write(
    `${label}: ${series} series, ${(perScrape / 1024).toFixed(1)} KiB per scrape per server; ` +
      `every ${INTERVAL_MS} ms that is ${((perScrape * scrapesPerHour) / 1e6).toFixed(0)} MB per hour per server\n`,
  );
}

const fixture = readFileSync(new URL('../../test/fixtures/prometheus/sglang-metrics.txt', import.meta.url), 'utf8');
report('fixture page (test/fixtures/prometheus/sglang-metrics.txt)', () => fixture);
report('default SGLang page, loaded', (index) => sglangMetricsPage(index, true));
report('default SGLang page, idle', (index) => sglangMetricsPage(index, false));
