import type { CombinedMetric } from '../../analysis/bootstrap/combine-repeats.js';
import type { RepeatsFile } from './repeats-file.js';

/** How a metric is labelled in the terminal and report.html: `TTFT p99`, `request throughput`. */
const LABELS: Readonly<Record<string, string>> = {
  request_throughput: 'Request throughput',
  output_token_throughput: 'Output token throughput',
  total_token_throughput: 'Total token throughput',
  goodput: 'Goodput',
  ttft: 'TTFT',
  tpot: 'TPOT',
  itl: 'ITL',
  total_latency: 'E2E latency',
  queue_time_in_router: 'Queue in router',
  network_time: 'Network',
  tokenize_time: 'Tokenize',
  pure_queue_time: 'Pure queue (server)',
  queue_time_in_server: 'Queue in server',
  prefill_time: 'Prefill',
  decode_time: 'Decode',
};

export function metricLabel(metric: CombinedMetric): string {
  const name = LABELS[metric.metric] ?? metric.metric;
  return `${name}${metric.statistic === 'value' ? '' : ` ${metric.statistic}`} (${metric.unit})`;
}

/** A number as the table shows it: 4 significant figures, at most 2 decimals past 100. */
export function shortNumber(value: number | null): string {
  if (value === null || !Number.isFinite(value)) return '-';
  const magnitude = Math.abs(value);
  return magnitude >= 100 ? value.toFixed(1) : magnitude >= 1 ? value.toFixed(2) : value.toFixed(3);
}

/** Short names of the methods, for the table's last column. */
export function methodText(method: CombinedMetric['method']): string {
  return method === 'bootstrap-runs-requests' ? 'bootstrap runs+requests' : method === 'bootstrap-requests' ? 'bootstrap requests' : method === 't-over-runs' ? 't over runs' : 'no interval';
}

/** The terminal's combined table: each headline metric as an estimate with its interval over the repeats. */
export function formatRepeatsTable(file: RepeatsFile, outputDirectory?: string): string {
  const width = 64;
  const lines: string[] = [];
  const title = ` servelab ${file.test} test: ${file.repeats} repeats `;
  const left = Math.max(0, Math.floor((width - title.length) / 2));
  lines.push(`${'='.repeat(left)}${title}${'='.repeat(Math.max(0, width - left - title.length))}`);
  lines.push(`Seeds: ${file.runs.map((run) => run.seed).join(', ')} (${file.seedRule})`);
  lines.push(`Verdicts: ${file.runs.map((run) => `${run.directory} ${run.verdict.toUpperCase()}${run.status === 'completed' ? '' : ` (${run.status})`}`).join(', ')}`);
  lines.push(`${(file.confidence * 100).toFixed(0)}% intervals; latencies: two-level bootstrap (runs, then requests), seeded (${file.bootstrap.seed}); throughput: t over runs`);
  const header = ['metric', 'estimate', 'low', 'high', 'method'];
  // A stage the engine does not model is 0 in every request of every repeat: its rows say nothing (repeats.csv keeps them).
  const shown = file.metrics.filter((metric) => !(metric.estimate === 0 && metric.low === 0 && metric.high === 0));
  const rows = shown.map((metric) => [metricLabel(metric), shortNumber(metric.estimate), shortNumber(metric.low), shortNumber(metric.high), `${methodText(metric.method)}${metric.resamples === null ? '' : `, ${metric.resamples} resamples`}`]);
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)));
  const render = (cells: readonly string[]): string => cells.map((cell, column) => (column === 0 || column === 4 ? cell.padEnd(widths[column] as number) : cell.padStart(widths[column] as number))).join('  ').trimEnd();
  lines.push(render(header), widths.map((cellWidth) => '-'.repeat(cellWidth)).join('  '), ...rows.map(render));
  lines.push('='.repeat(width));
  if (outputDirectory !== undefined) lines.push(`each repeat's own files: ${outputDirectory}/repeat-1 .. repeat-${file.repeats}`);
  return `${lines.join('\n')}\n`;
}
