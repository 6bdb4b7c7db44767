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
import { ChangedRows } from '../src/scrape/changed-rows.js';
import { parsePrometheusText } from '../src/scrape/prometheus-text.js';
import { DEFAULT_SCRAPE_BUDGET } from '../src/scrape/scrape-budget.js';
import type { Sample } from '../src/scrape/scraper.js';
import { sglangMetricsPage } from './sglang-metrics-page.js';

const INTERVAL_MS = DEFAULT_SCRAPE_BUDGET.baseIntervalMs;
const NODE_URL = 'http://127.0.0.1:30001/metrics';
const scrapesPerHour = 3_600_000 / INTERVAL_MS;

function sample(index: number, text: string): Sample {
  return { time: 1_700_000_000 + index * 0.5, url: NODE_URL, ok: true, durationMs: 3.417, metrics: parsePrometheusText(text).samples };
}

/**
 * Mean bytes per scrape over scrapes 2-21 (the first, always written whole, left out): `whole` writes every series
 * each time, as the table did before.
 */
function bytesPerScrape(pages: (index: number) => string, whole: boolean): { bytes: number; series: number } {
  const scrapes = 20;
  let bytes = 0;
  let series = 0;
  let writer = new ChangedRows();
  writer.rows(sample(0, pages(0)));
  for (let index = 1; index <= scrapes; index++) {
    if (whole) writer = new ChangedRows();
    const scraped = sample(index, pages(index));
    series = scraped.metrics.length;
    bytes += Buffer.byteLength(writer.rows(scraped).text);
  }
  return { bytes: bytes / scrapes, series };
}

function report(label: string, pages: (index: number) => string): void {
  const whole = bytesPerScrape(pages, true);
  const changed = bytesPerScrape(pages, false);
  const perHourMb = (bytes: number): string => ((bytes * scrapesPerHour) / 1e6).toFixed(bytes * scrapesPerHour < 1e7 ? 2 : 0);
  // The budget's pace: the wait after a round is what its rows take at the budget's rate (src/scrape/scrape-budget.ts).
  const pacedMs = (servers: number): string => Math.max(INTERVAL_MS, ((changed.bytes * servers) / DEFAULT_SCRAPE_BUDGET.bytesPerHour) * 3_600_000).toFixed(0);
  process.stdout.write(
    `${label}: ${whole.series} series; written whole ${(whole.bytes / 1024).toFixed(1)} KiB per scrape (${perHourMb(whole.bytes)} MB/h per server ` +
      `every ${INTERVAL_MS} ms, the table before); changes only ${(changed.bytes / 1024).toFixed(2)} KiB (${perHourMb(changed.bytes)} MB/h); ` +
      `under the ${DEFAULT_SCRAPE_BUDGET.bytesPerHour / 1e6} MB/h budget scraped every ${pacedMs(1)} ms with 1 server, ${pacedMs(4)} ms with 4\n`,
  );
}

const fixture = readFileSync(new URL('../../test/fixtures/prometheus/sglang-metrics.txt', import.meta.url), 'utf8');
report('fixture page (test/fixtures/prometheus/sglang-metrics.txt)', () => fixture);
report('default SGLang page, loaded', (index) => sglangMetricsPage(index, true));
report('default SGLang page, idle', (index) => sglangMetricsPage(index, false));
