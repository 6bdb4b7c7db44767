import type { MetricSample } from './prometheus-text.js';
import type { Sample } from './scraper.js';
import { field, labelsText, nodeOfMetricsUrl, valueText } from './server-metrics-rows.js';

/**
 * Turns scrapes into partial-file rows (every column of server-metrics.csv but `time_s`), writing only what changed.
 *
 * Each scrape opens with one scrape row (no metric: its instant, `scrape_ms`, and `error` when it failed or the page
 * was empty). Then, for each metric name, all of that name's series (every label set) when any of them differs from
 * the node's previous scrape, or none when they are all as they were: a value holds until the next row of its name. A
 * name the server no longer serves gets one row with neither labels nor value. After a failed scrape the node's next
 * answer is written whole. Whole names, not single series: every row time of a name carries all its label sets, so a sum over tp ranks
 * at that time is true without filling anything forward.
 *
 * Why: a SGLang page holds ~180 series, most of them histogram buckets; written whole twice a second that was 240 MB
 * an hour per server (bench/server-metrics-size.ts), mostly repeating values that had not moved.
 */
export class ChangedRows {
  /** Per node, per metric name: that name's rows (labels and values) as last written, to see whether they moved. */
  readonly #lastByNode = new Map<string, Map<string, string>>();

  /** The rows of one scrape, each ending in a line break, and how many there are. */
  rows(sample: Sample): { text: string; rows: number } {
    const timestamp = sample.time.toFixed(6);
    const nodeName = nodeOfMetricsUrl(sample.url);
    const node = field(nodeName);
    const scrapeMs = (Math.round(sample.durationMs * 1000) / 1000).toString();
    if (!sample.ok || sample.metrics.length === 0) {
      // Nothing is known of the node's series now (an empty page counts as a failure, as it always has): its next
      // answer is written whole.
      this.#lastByNode.delete(nodeName);
      return { text: `${timestamp},${node},,,,${scrapeMs},${field(sample.error ?? (sample.ok ? 'no samples' : 'failed'))}\n`, rows: 1 };
    }
    let text = `${timestamp},${node},,,,${scrapeMs},\n`;
    let rows = 1;
    const last = this.#lastByNode.get(nodeName) ?? new Map<string, string>();
    const current = new Map<string, string>();
    for (const [name, series] of byName(sample.metrics)) {
      const parts = series.map((metric) => `${field(labelsText(metric.labels))},${valueText(metric.value)}`);
      const written = parts.join('\n');
      current.set(name, written);
      if (last.get(name) === written) continue;
      for (const part of parts) text += `${timestamp},${node},${field(name)},${part},${scrapeMs},\n`;
      rows += parts.length;
    }
    for (const name of last.keys()) {
      if (current.has(name)) continue;
      text += `${timestamp},${node},${field(name)},,,${scrapeMs},\n`;
      rows++;
    }
    this.#lastByNode.set(nodeName, current);
    return { text, rows };
  }
}

/** The samples grouped by metric name, names in the order the page first serves them. */
function byName(metrics: readonly MetricSample[]): Map<string, MetricSample[]> {
  const grouped = new Map<string, MetricSample[]>();
  for (const metric of metrics) {
    const series = grouped.get(metric.name);
    if (series) series.push(metric);
    else grouped.set(metric.name, [metric]);
  }
  return grouped;
}
