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
  // The budget's pace (src/scrape/scrape-budget.ts): every round at the base interval until the burst is spent, then
  // each round waits what its rows take at the rate.
  const { bytesPerHour, burstBytes } = DEFAULT_SCRAPE_BUDGET;
  const pace = (servers: number): string => {
    const roundBytes = changed.bytes * servers;
    const pacedMs = Math.max(INTERVAL_MS, (roundBytes / bytesPerHour) * 3_600_000);
    if (pacedMs === INTERVAL_MS) return `every ${INTERVAL_MS} ms with ${servers}`;
    const burstS = burstBytes / (roundBytes / (INTERVAL_MS / 1000) - bytesPerHour / 3600);
    return `every ${INTERVAL_MS} ms for ${burstS.toFixed(0)} s then every ${pacedMs.toFixed(0)} ms with ${servers}`;
  };
  process.stdout.write(
    `${label}: ${whole.series} series; written whole ${(whole.bytes / 1024).toFixed(1)} KiB per scrape (${perHourMb(whole.bytes)} MB/h per server ` +
      `every ${INTERVAL_MS} ms, the table before); changes only ${(changed.bytes / 1024).toFixed(2)} KiB (${perHourMb(changed.bytes)} MB/h); ` +
      `under the ${bytesPerHour / 1e6} MB/h budget (${burstBytes / 1e6} MB ahead) scraped ${pace(1)} server, ${pace(4)}\n`,
  );
}

const fixture = readFileSync(new URL('../../test/fixtures/prometheus/sglang-metrics.txt', import.meta.url), 'utf8');
report('fixture page (test/fixtures/prometheus/sglang-metrics.txt)', () => fixture);
report('default SGLang page, loaded', (index) => sglangMetricsPage(index, true));
report('default SGLang page, idle', (index) => sglangMetricsPage(index, false));
