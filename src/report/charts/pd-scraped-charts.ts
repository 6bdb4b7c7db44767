import type { StoredSample } from '../../scrape/server-metrics-file.js';
import { seriesOf } from '../../scrape/server-metrics-file.js';
import type { ChartDefinition, LineSeries } from './chart-model.js';
import { lineOverTime } from './line-over-time.js';
import type { EventMark } from './run-events.js';
import { seriesColour } from './series-palette.js';

/**
 * SGLang's KV transfer histograms (a PD server's `/metrics`: `kv_transfer_latency_ms`, `kv_transfer_total_mb`, observed
 * once per transfer by `SchedulerReqTimeStats.compute_and_observe_kv_transfer_metrics`, observability/req_time_stats.py).
 * The prefix is `sglang:` or `sglang_` depending on the version: both are read.
 */
const PREFIXES = ['sglang:', 'sglang_'] as const;
const LATENCY_SUM = 'kv_transfer_latency_ms_sum';
const LATENCY_COUNT = 'kv_transfer_latency_ms_count';
const MEGABYTES_SUM = 'kv_transfer_total_mb_sum';

/** The series these charts read from server-metrics.csv (rendered-charts.ts reads only the series charts need). */
export const PD_SCRAPED_SERIES: readonly string[] = PREFIXES.flatMap((prefix) => [LATENCY_SUM, LATENCY_COUNT, MEGABYTES_SUM].map((name) => `${prefix}${name}`));

/** One counter per server under whichever prefix the server used (the first with readings). */
function counterOf(samples: readonly StoredSample[], name: string): Map<string, [number, number][]> {
  const merged = new Map<string, [number, number][]>();
  for (const prefix of PREFIXES) {
    for (const [url, points] of seriesOf(samples, `${prefix}${name}`)) if (!merged.has(url)) merged.set(url, points);
  }
  return merged;
}

/**
 * Per server and scrape interval, from the counters' increments: the mean KV transfer latency (Δ latency sum / Δ
 * count, ms) and the KV megabytes moved per second (Δ total MB / Δ time). An interval without a transfer, or across a
 * counter reset (a restarted server), has no point.
 */
export function pdScrapedTransferCharts(samples: readonly StoredSample[], events: readonly EventMark[]): ChartDefinition[] {
  const latencySums = counterOf(samples, LATENCY_SUM);
  if (latencySums.size === 0) return [];
  const latencyCounts = counterOf(samples, LATENCY_COUNT);
  const megabytes = counterOf(samples, MEGABYTES_SUM);
  const latencySeries: LineSeries[] = [];
  const volumeSeries: LineSeries[] = [];
  [...latencySums.keys()].sort().forEach((url, index) => {
    const sums = latencySums.get(url) ?? [];
    const counts = new Map(latencyCounts.get(url) ?? []);
    const xs: number[] = [];
    const ys: number[] = [];
    for (let at = 1; at < sums.length; at++) {
      const [time, sum] = sums[at] as [number, number];
      const [previousTime, previousSum] = sums[at - 1] as [number, number];
      const transfers = (counts.get(time) ?? Number.NaN) - (counts.get(previousTime) ?? Number.NaN);
      if (!(transfers > 0) || sum < previousSum) continue;
      xs.push(time);
      ys.push((sum - previousSum) / transfers);
    }
    if (xs.length > 0) latencySeries.push({ name: url, colour: seriesColour(index), xs: Float64Array.from(xs), ys: Float64Array.from(ys) });
    const moved = megabytes.get(url) ?? [];
    const volumeXs: number[] = [];
    const volumeYs: number[] = [];
    for (let at = 1; at < moved.length; at++) {
      const [time, total] = moved[at] as [number, number];
      const [previousTime, previousTotal] = moved[at - 1] as [number, number];
      if (time <= previousTime || total < previousTotal) continue;
      volumeXs.push(time);
      volumeYs.push((total - previousTotal) / (time - previousTime));
    }
    if (volumeXs.length > 0) volumeSeries.push({ name: url, colour: seriesColour(index), xs: Float64Array.from(volumeXs), ys: Float64Array.from(volumeYs) });
  });
  const charts: ChartDefinition[] = [];
  if (latencySeries.length > 0) {
    charts.push(
      lineOverTime({
        name: 'pd-kv-transfer-latency-scraped',
        title: 'KV transfer latency, server-reported',
        description: 'Mean KV transfer latency per scrape interval on each server, from the increments of its kv_transfer_latency_ms histogram (sum over count; sglang: or sglang_ prefix) in server-metrics.csv.',
        series: latencySeries,
        yTitle: 'mean KV transfer latency (ms)',
        legendTitle: 'server',
        events,
      }),
    );
  }
  if (volumeSeries.length > 0) {
    charts.push(
      lineOverTime({
        name: 'pd-kv-transfer-throughput-scraped',
        title: 'KV transfer throughput, server-reported',
        description: 'KV cache megabytes each server sent per second, from the increments of its kv_transfer_total_mb histogram sum between scrapes (server-metrics.csv).',
        series: volumeSeries,
        yTitle: 'MB per second',
        legendTitle: 'server',
        events,
      }),
    );
  }
  return charts;
}
