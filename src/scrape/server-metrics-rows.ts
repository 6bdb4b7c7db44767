/**
 * server-metrics.csv, the tidy table of scraped `/metrics`, so that `pandas.read_csv('server-metrics.csv')` loads it in
 * one call: per scrape, one scrape row (no metric; `error` set when it failed), then one row per series of each metric
 * name whose values moved since the node's previous scrape (ChangedRows). Documented in docs/metrics.md ("Server
 * metrics").
 */
export const SERVER_METRICS_CSV = 'server-metrics.csv';
export const SERVER_METRICS_COLUMNS = ['time_s', 'timestamp', 'node', 'metric', 'labels', 'value', 'scrape_ms', 'error'] as const;

/**
 * While the run goes on, rows go to this file as they are scraped, without `time_s`: the run's t0 is known only once
 * the measured load starts, after the first scrapes. At the end it becomes server-metrics.csv; a run killed before
 * that leaves it, and `servelab report` reads it with the t0 of summary.json.
 */
export const SERVER_METRICS_PARTIAL = 'server-metrics.partial.csv';

/** The notice when appending to the partial file stopped (a full disk): what was appended before is kept. */
export function appendStoppedMessage(reason: string): string {
  return `server metrics stopped being saved: ${reason} (${SERVER_METRICS_CSV} holds what was scraped until then; the run goes on)`;
}

/** RFC 4180 quoting where needed (labels are JSON, so they always are). */
export function field(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A value as pandas reads it back: `inf`, `-inf` and `NaN` are floats to `read_csv`. */
export function valueText(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return 'inf';
  if (value === Number.NEGATIVE_INFINITY) return '-inf';
  return String(value);
}

/** The node a `/metrics` URL belongs to: its base URL, as requests.csv's `host` names the server (the join key). */
export function nodeOfMetricsUrl(url: string): string {
  return url.endsWith('/metrics') ? url.slice(0, -'/metrics'.length) : url;
}

/** Labels as one JSON object with sorted keys: the same label set is always the same text. */
export function labelsText(labels: Record<string, string>): string {
  const sorted: Record<string, string> = {};
  for (const name of Object.keys(labels).sort()) sorted[name] = labels[name] as string;
  return JSON.stringify(sorted);
}

/** Seconds after t0 with microsecond precision, no trailing zeros. */
export function secondsText(seconds: number): string {
  return (Math.round(seconds * 1e6) / 1e6).toString();
}
