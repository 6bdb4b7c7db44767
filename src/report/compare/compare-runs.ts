import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { empiricalCdf, strideSample } from '../../analysis/cdf.js';
import { deriveColumnArrays } from '../../analysis/derive.js';
import { sampledInterTokenLatencies } from '../../analysis/inter-token-gaps.js';
import type { RunData } from '../../types/run.js';
import type { DerivedColumnName, Statistics, Summary } from '../../types/summary.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import type { ChartModel, LineSeries } from '../charts/chart-model.js';
import { renderPng, renderSvg } from '../charts/render-chart.js';
import { lineLegend, seriesColour } from '../charts/series-palette.js';
import { csvField, csvLine } from '../csv/csv-format.js';
import { escapeHtml } from '../html/html-reporter.js';
import { nodesInIndexOrder } from '../nodes/node-order.js';
import type { CombinedRepeats } from '../../analysis/bootstrap/combine-repeats.js';
import type { DifferenceEstimate } from '../../analysis/bootstrap/repeat-estimates.js';
import { comparisonDeltas, deltaText } from './compare-deltas.js';

/** One run in a comparison: a unique label, its data and its (re-computed) summary. */
export interface ComparedRun {
  label: string;
  /** The run (a repeats directory: its first repeat, whose values the rows without an estimate over repeats show). */
  run: RunData;
  summary: Summary;
  /** A repeats directory: every repeat (the first is `run`), and the estimates over them its headline rows show. */
  repeats?: readonly { run: RunData; summary: Summary }[];
  combined?: CombinedRepeats;
}

export interface ComparisonRow {
  metric: string;
  unit: string;
  values: (number | string | null)[];
  /** Headline rows: each later run's difference from the first, with its 95% interval (compare-deltas.ts). */
  deltas?: (DifferenceEstimate | null)[];
}

const MAX_CDF_POINTS = 300;
/** Curves come from an even sample of at most this many requests per run (a million draw the same curve). */
const CDF_SAMPLE_RECORDS = 100_000;

/** Labels runs by run id, falling back to the directory name (and then a position) when ids repeat. */
export function uniqueLabels(candidates: readonly { runId: string; directoryName: string }[]): string[] {
  const counts = new Map<string, number>();
  for (const { runId } of candidates) counts.set(runId, (counts.get(runId) ?? 0) + 1);
  const labels = candidates.map(({ runId, directoryName }) => ((counts.get(runId) ?? 0) > 1 ? directoryName : runId));
  const seen = new Map<string, number>();
  return labels.map((label) => {
    const count = (seen.get(label) ?? 0) + 1;
    seen.set(label, count);
    return count === 1 ? label : `${label} (${count})`;
  });
}

/** Settings that name or place a run rather than configure what it measured: never what "differs" between runs. */
const IDENTITY_SETTINGS = new Set(['test', 'runId', 'outputDir', 'resultsRoot', 'progress', 'quiet']);

function snakeCase(key: string): string {
  return key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

function settingText(value: unknown): string {
  if (value === undefined || value === null) return 'unset';
  if (typeof value === 'number' && !Number.isFinite(value)) return value > 0 ? 'inf' : String(value);
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** The settings (config.json keys) whose values differ between the runs, in the first run's key order. */
export function differingSettings(configs: readonly Record<string, unknown>[]): string[] {
  const first = configs[0] ?? {};
  const keys = [...new Set(configs.flatMap((config) => Object.keys(config)))].filter((key) => !IDENTITY_SETTINGS.has(key));
  return keys.filter((key) => configs.some((config) => !isDeepStrictEqual(config[key], first[key])));
}

/**
 * Labels runs by the settings that differ between them, in the first users' snake_case names
 * (`max_running_requests=64, routing_policy=round_robin`); undefined when no setting differs or two runs would share a
 * label (then the run ids tell them apart).
 */
export function settingLabels(configs: readonly Record<string, unknown>[]): string[] | undefined {
  if (configs.length < 2) return undefined;
  const keys = differingSettings(configs);
  if (keys.length === 0) return undefined;
  const labels = configs.map((config) => keys.map((key) => `${snakeCase(key)}=${settingText(config[key])}`).join(', '));
  return new Set(labels).size === labels.length ? labels : undefined;
}

function statisticRows(name: string, pick: (summary: Summary) => Statistics | null, runs: readonly ComparedRun[]): ComparisonRow[] {
  return (['mean', 'p50', 'p90', 'p99', 'max'] as const).map((key) => ({
    metric: `${name} ${key}`,
    unit: 'ms',
    values: runs.map((run) => {
      const statistics = pick(run.summary);
      return statistics ? statistics[key] * 1000 : null;
    }),
  }));
}

/**
 * Cached prompt tokens over prompt tokens of every succeeded request, all nodes together: the per-node ratios of
 * compare-nodes.csv weighted by each node's prompt tokens, as a policy comparison needs it. Null when no request
 * reported its prompt tokens.
 */
export function aggregateCacheHitRatio(run: RunData): number | null {
  let promptTokens = 0;
  let cachedTokens = 0;
  for (const record of run.records) {
    if (record.warmup || !record.success || record.actualPromptTokens === undefined) continue;
    promptTokens += record.actualPromptTokens;
    cachedTokens += record.cachedTokens ?? 0;
  }
  return promptTokens > 0 ? cachedTokens / promptTokens : null;
}

/**
 * The side-by-side table: one row per metric, one column per run. A row empty or zero in every run (routing rows of
 * node tests, queue times of a server without timing keys, failures of a clean run) says nothing and is left out.
 */
export function comparisonRows(runs: readonly ComparedRun[], options: ComparisonOptions = {}): ComparisonRow[] {
  const cached = rowsCache.get(runs);
  if (cached !== undefined) return cached;
  const rows = withRepeatEstimates(runs, plainComparisonRows(runs));
  if (options.deltas === false) {
    rowsCache.set(runs, rows);
    return rows;
  }
  const deltas = comparisonDeltas(runs.map((compared) => ({ runs: (compared.repeats ?? [compared]).map((entry) => entry.run), summaries: (compared.repeats ?? [compared]).map((entry) => entry.summary) })));
  for (const row of rows) {
    const rowDeltas = deltas.get(row.metric);
    if (rowDeltas !== undefined && rowDeltas.some((delta) => delta !== null)) row.deltas = rowDeltas;
  }
  rowsCache.set(runs, rows);
  return rows;
}

export interface ComparisonOptions {
  /**
   * Each later run's difference from the first with its interval (default true). A sweep leaves them out: its runs are
   * points of a grid, not treatments of one baseline, and their bootstraps would cost seconds a run.
   */
  deltas?: boolean;
}

/** The rows of a comparison already worked out: the deltas' bootstraps are the costly part, and the table, CSV and HTML share them. */
const rowsCache = new WeakMap<readonly ComparedRun[], ComparisonRow[]>();

/** The combined metric a row shows for a repeats directory (`ttft p99` → ttft/p99; `request throughput` → request_throughput). */
function combinedValueOf(combined: CombinedRepeats, row: string): number | null | undefined {
  const latency = /^(ttft|tpot|itl|total_latency|queue_time_in_router|network_time|tokenize_time|pure_queue_time|queue_time_in_server|prefill_time|decode_time) /.test(row);
  const [metric, statistic] = latency ? row.split(' ') : [row.replaceAll(' ', '_'), 'value'];
  const found = combined.metrics.find((entry) => entry.metric === metric && entry.statistic === statistic)?.estimate;
  // A latency statistic the combination does not give (a stage's p90) stays empty rather than show one repeat's value.
  return found ?? (latency ? null : undefined);
}

/**
 * A repeats directory's column: its headline rows show the estimates over its repeats; its request counts are the
 * repeats' sums; a `repeats` row says how many there are. Other rows stay its first repeat's (the table's footnote says so).
 */
function withRepeatEstimates(runs: readonly ComparedRun[], rows: ComparisonRow[]): ComparisonRow[] {
  if (!runs.some((run) => run.combined !== undefined)) return rows;
  for (const row of rows) {
    row.values = row.values.map((value, index) => {
      const compared = runs[index] as ComparedRun;
      if (compared.combined === undefined || compared.repeats === undefined) return value;
      if (row.metric === 'requests succeeded') return compared.repeats.reduce((sum, entry) => sum + entry.summary.counts.succeeded, 0);
      if (row.metric === 'requests failed') return compared.repeats.reduce((sum, entry) => sum + entry.summary.counts.failed, 0);
      if (row.metric.endsWith(' max')) {
        const column = row.metric.slice(0, -4);
        const maxima = compared.repeats.map((entry) => (column === 'itl' ? entry.summary.interTokenLatency : entry.summary.latencies[column as DerivedColumnName])?.max);
        return maxima.every((max) => max !== undefined) ? Math.max(...(maxima as number[])) * 1000 : null;
      }
      const combinedValue = combinedValueOf(compared.combined, row.metric);
      return combinedValue === undefined ? value : combinedValue;
    });
  }
  return [{ metric: 'repeats', unit: 'count', values: runs.map((run) => run.repeats?.length ?? 1) }, ...rows];
}

function plainComparisonRows(runs: readonly ComparedRun[]): ComparisonRow[] {
  const row = (metric: string, unit: string, pick: (run: ComparedRun) => number | string | null | undefined): ComparisonRow => ({
    metric,
    unit,
    values: runs.map((run) => pick(run) ?? null),
  });
  const latency = (column: DerivedColumnName) => (summary: Summary) => summary.latencies[column];
  return [
    row('test', '', (run) => run.run.info.testLevel),
    row('target', '', (run) => run.run.info.target),
    // A virtual-time run is a simulation, not a measurement: said in every output, next to what it ran against.
    row('time', '', (run) => timeOf(run)),
    row('verdict', '', (run) => run.summary.verdict.state),
    row('status', '', (run) => run.run.info.status),
    row('requests succeeded', 'count', (run) => run.summary.counts.succeeded),
    row('requests failed', 'count', (run) => run.summary.counts.failed),
    row('duration', 's', (run) => run.summary.durationSeconds),
    row('target arrival rate', 'req/s', (run) => run.summary.offeredLoad.targetRate),
    row('scheduled arrival rate', 'req/s', (run) => run.summary.offeredLoad.scheduledRate),
    row('achieved arrival rate', 'req/s', (run) => run.summary.offeredLoad.achievedRate),
    row('inter-arrival CV', '', (run) => run.summary.offeredLoad.interArrivalCv),
    row('send lag p99', 'ms', (run) => (run.summary.offeredLoad.sendLag ? run.summary.offeredLoad.sendLag.p99 * 1000 : null)),
    row('request throughput', 'req/s', (run) => run.summary.throughput.requestsPerSecond),
    row('input token throughput', 'tok/s', (run) => run.summary.throughput.inputTokensPerSecond),
    row('output token throughput', 'tok/s', (run) => run.summary.throughput.outputTokensPerSecond),
    row('total token throughput', 'tok/s', (run) => run.summary.throughput.totalTokensPerSecond),
    row('concurrency (sum E2E / duration)', 'requests', (run) => run.summary.concurrency.benchServing),
    row('goodput', 'req/s', (run) => run.summary.goodput?.requestsPerSecond),
    // A ratio has no unit, as the imbalance rows: "(ratio)" would only repeat the name.
    row('cache hit ratio (all nodes)', '', (run) => aggregateCacheHitRatio(run.run)),
    ...statisticRows('ttft', latency('ttft'), runs),
    ...statisticRows('tpot', latency('tpot'), runs),
    ...statisticRows('itl', (summary) => summary.interTokenLatency, runs),
    ...statisticRows('total_latency', latency('total_latency'), runs),
    // Server-side: from the server's own timestamps (and the tap's, for server_latency).
    ...statisticRows('server_latency', latency('server_latency'), runs),
    ...statisticRows('server_ttft', latency('server_ttft'), runs),
    ...statisticRows('queue_time_in_router', latency('queue_time_in_router'), runs),
    ...statisticRows('pure_queue_time', latency('pure_queue_time'), runs),
    ...statisticRows('queue_time_in_server', latency('queue_time_in_server'), runs),
    ...statisticRows('prefill_time', latency('prefill_time'), runs),
    ...statisticRows('decode_time', latency('decode_time'), runs),
    row('nodes', 'count', (run) => run.summary.routing?.nodes.length),
    row('node imbalance max/mean', '', (run) => run.summary.routing?.imbalanceMaxOverMean),
    row('node imbalance CV', '', (run) => run.summary.routing?.imbalanceCv),
    row('prefix-group share on top node', '', (run) => run.summary.routing?.prefixGroupAffinity?.meanShareOnTopNode),
  ].filter((comparison) => comparison.values.some((value) => value !== null && value !== 0 && value !== ''));
}

/** "virtual" for a discrete-event simulation (--virtual-time), "real" for a run that sent real requests. */
export function timeOf(run: ComparedRun): 'virtual' | 'real' {
  return run.run.info.simulated ? 'virtual' : 'real';
}

function formatValue(value: number | string | null): string {
  if (value === null) return '';
  if (typeof value === 'string') return value;
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '';
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 100 ? value.toFixed(1) : Math.abs(value) >= 1 ? value.toFixed(3) : value.toPrecision(4);
}

/** The table as aligned text for a terminal. */
export function formatComparisonTable(runs: readonly ComparedRun[], rows: readonly ComparisonRow[] = comparisonRows(runs)): string {
  const deltaLabels = deltaColumnLabels(runs, rows);
  const header = ['metric', ...runs.map((run) => run.label), ...deltaLabels];
  const body = rows.map((row) => [
    `${row.metric}${row.unit ? ` (${row.unit})` : ''}`,
    ...row.values.map(formatValue),
    ...deltaLabels.map((_, index) => deltaText(row.deltas?.[index], formatDelta)),
  ]);
  const widths = header.map((cell, column) => Math.max(cell.length, ...body.map((line) => (line[column] ?? '').length)));
  const render = (cells: readonly string[]): string =>
    cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[0] as number) : cell.padStart(widths[column] as number))).join('  ');
  return `${[render(header), widths.map((width) => '-'.repeat(width)).join('  '), ...body.map(render), ...comparisonFootnotes(runs, deltaLabels.length > 0)].join('\n')}\n`;
}

/** `Δ <label>` (its difference from the first run) for every run after the first, when any row has a difference. */
function deltaColumnLabels(runs: readonly ComparedRun[], rows: readonly ComparisonRow[]): string[] {
  if (!rows.some((row) => row.deltas !== undefined)) return [];
  return runs.slice(1).map((run) => `Δ ${run.label}`);
}

function formatDelta(value: number): string {
  const magnitude = Math.abs(value);
  return magnitude >= 100 ? value.toFixed(1) : magnitude >= 1 ? value.toFixed(2) : value.toFixed(3);
}

/** What the Δ columns and a repeats directory's column mean, under the table. */
function comparisonFootnotes(runs: readonly ComparedRun[], hasDeltas: boolean): string[] {
  const notes: string[] = [];
  if (hasDeltas) {
    notes.push(
      'Δ: difference from the first run with its 95% interval (latencies: seeded bootstrap of the difference, over runs then requests where a side has repeats; throughput: Welch t when both sides have repeats); "beyond noise" when the interval excludes 0.',
    );
  }
  if (runs.some((run) => run.repeats !== undefined)) {
    notes.push('A repeats directory\'s column: throughput, goodput and latency rows are its estimates over all repeats, request counts their sums, other rows (and its CDF curves) its first repeat\'s.');
  }
  return notes;
}

function comparisonCsv(runs: readonly ComparedRun[], rows: readonly ComparisonRow[]): string {
  // Per later run: the difference from the first, its interval, and whether it is beyond the noise (empty where none).
  const deltaHeaders = deltaColumnLabels(runs, rows).length === 0 ? [] : runs.slice(1).flatMap((run) => ['delta', 'delta_low', 'delta_high', 'beyond_noise'].map((name) => csvField(`${name} ${run.label}`)));
  const lines = [csvLine(['metric', 'unit', ...runs.map((run) => csvField(run.label)), ...deltaHeaders])];
  for (const row of rows) {
    const deltaFields =
      deltaHeaders.length === 0
        ? []
        : runs.slice(1).flatMap((_, index) => {
            const delta = row.deltas?.[index];
            return delta === null || delta === undefined ? ['', '', '', ''] : [csvField(delta.estimate), csvField(delta.low), csvField(delta.high), csvField(delta.low === null ? undefined : String(delta.beyondNoise))];
          });
    lines.push(csvLine([csvField(row.metric), csvField(row.unit), ...row.values.map((value) => csvField(formatValueForCsv(value))), ...deltaFields]));
  }
  return lines.join('');
}

function formatValueForCsv(value: number | string | null): string | undefined {
  if (value === null) return undefined;
  if (typeof value === 'number' && !Number.isFinite(value)) return value > 0 ? 'inf' : undefined;
  return String(value);
}

/** Seconds as milliseconds for compare-nodes.csv, whose latencies are in ms like compare.csv's. */
function milliseconds(seconds: number | undefined): number | undefined {
  return seconds === undefined ? undefined : seconds * 1000;
}

/** compare-nodes.csv's columns: latencies in ms (`_ms`), as in compare.csv. */
export const COMPARE_NODES_COLUMNS: readonly string[] = [
  'run',
  'node',
  'host',
  'requests',
  'share',
  'failed',
  'cache_hit_ratio',
  'ttft_p50_ms',
  'ttft_p99_ms',
  'total_latency_p50_ms',
  'total_latency_p99_ms',
  'peak_in_flight',
  'mean_in_flight',
];

function nodesCsv(runs: readonly ComparedRun[]): string | undefined {
  const routed = runs.filter((run) => run.summary.routing);
  if (routed.length === 0) return undefined;
  const lines = [csvLine([...COMPARE_NODES_COLUMNS])];
  for (const run of routed) {
    for (const node of nodesInIndexOrder(run.summary.routing?.nodes ?? [])) {
      lines.push(
        csvLine(
          [
            run.label,
            node.node ?? undefined,
            node.host,
            node.requests,
            node.share,
            node.failed,
            node.cacheHitRatio ?? undefined,
            milliseconds(node.ttft?.p50),
            milliseconds(node.ttft?.p99),
            milliseconds(node.totalLatency?.p50),
            milliseconds(node.totalLatency?.p99),
            node.peakInFlight,
            node.meanInFlight,
          ].map((value) => csvField(value)),
        ),
      );
    }
  }
  return lines.join('');
}

/** A chart of the comparison: file name (without extension), title, and what to draw. */
export interface ComparisonChart {
  name: string;
  title: string;
  chart: ChartModel;
}

const PLOT_WIDTH_PX = 640;
const PLOT_HEIGHT_PX = 240;

/** Thinned empirical CDF of one metric per run, in milliseconds: one series per run, in the runs' order. */
function cdfSeries(runs: readonly ComparedRun[], values: (run: RunData) => ArrayLike<number>): LineSeries[] {
  return runs.map((compared, index) => {
    const points = empiricalCdf(values(compared.run), MAX_CDF_POINTS);
    return { name: compared.label, colour: seriesColour(index), xs: points.map((point) => point.value * 1000), ys: points.map((point) => point.fraction) };
  });
}

function succeededColumn(run: RunData, column: DerivedColumnName): Float64Array {
  return deriveColumnArrays(strideSample(run.records.filter((record) => record.success && !record.warmup), CDF_SAMPLE_RECORDS))[column];
}

/** Overlaid CDF charts: TTFT, TPOT, ITL and end-to-end latency, one line per run; then the trend charts, if any. */
export function comparisonCharts(runs: readonly ComparedRun[]): ComparisonChart[] {
  // The last entry is what one value is: the y axis counts requests, except ITL's, which counts inter-token gaps.
  const metrics: [string, string, (run: RunData) => ArrayLike<number>, string][] = [
    ['compare-cdf-ttft', 'TTFT', (run) => succeededColumn(run, 'ttft'), 'requests'],
    ['compare-cdf-tpot', 'TPOT', (run) => succeededColumn(run, 'tpot'), 'requests'],
    // The gaps are thinned too: a long-output run has hundreds of them per request (see the report's ITL CDF).
    ['compare-cdf-itl', 'ITL', (run) => sampledInterTokenLatencies(strideSample(run.records.filter((record) => !record.warmup), CDF_SAMPLE_RECORDS / 10), CDF_SAMPLE_RECORDS), 'inter-token gaps'],
    ['compare-cdf-total-latency', 'End-to-end latency', (run) => succeededColumn(run, 'total_latency'), 'requests'],
  ];
  const charts: ComparisonChart[] = [];
  for (const [name, label, values, unit] of metrics) {
    const series = cdfSeries(runs, values);
    if (series.every((line) => line.xs.length === 0)) continue;
    charts.push({
      name,
      title: `${label} CDF by run`,
      chart: {
        title: `${label}: cumulative distribution by run`,
        plotWidthPx: PLOT_WIDTH_PX,
        plotHeightPx: PLOT_HEIGHT_PX,
        x: { kind: 'linear', title: `${label} (ms)`, includeZero: false },
        y: { kind: 'linear', title: `fraction of ${unit}`, domain: [0, 1] },
        marks: [{ kind: 'line', interpolation: 'step-after', strokeWidthPx: 1.5, series }],
        legends: [lineLegend('run', series)],
      },
    });
  }
  return [...charts, ...trendCharts(runs)];
}

/**
 * When the runs differ in one numeric setting (a sweep over `max_running_requests`, the request rate, ...), how
 * throughput and p99 latency follow it: one point per run, against the setting.
 */
export function trendCharts(runs: readonly ComparedRun[]): ComparisonChart[] {
  const configs = runs.map((run) => run.run.config);
  const keys = differingSettings(configs);
  if (runs.length < 2 || keys.length !== 1) return [];
  const key = keys[0] as string;
  const settingValues = configs.map((config) => config[key]);
  if (!settingValues.every((value) => typeof value === 'number' && Number.isFinite(value))) return [];
  const settings = settingValues as number[];
  const setting = snakeCase(key);
  const chart = (name: string, title: string, yTitle: string, series: LineSeries[]): ComparisonChart => ({
    name,
    title,
    chart: {
      title,
      plotWidthPx: PLOT_WIDTH_PX,
      plotHeightPx: PLOT_HEIGHT_PX,
      x: { kind: 'linear', title: setting, includeZero: false },
      y: { kind: 'linear', title: yTitle },
      marks: [{ kind: 'line', interpolation: 'linear', strokeWidthPx: 1.5, pointRadiusPx: 3, series }],
      legends: [lineLegend('metric', series)],
    },
  });
  // Points in the setting's order, so the line runs left to right whatever order the runs were given in.
  const order = settings.map((_, index) => index).sort((a, b) => (settings[a] as number) - (settings[b] as number));
  const line = (name: string, colourIndex: number, value: (run: ComparedRun) => number | undefined): LineSeries | undefined => {
    const kept = order.filter((index) => value(runs[index] as ComparedRun) !== undefined);
    if (kept.length === 0) return undefined;
    return { name, colour: seriesColour(colourIndex), xs: kept.map((index) => settings[index] as number), ys: kept.map((index) => value(runs[index] as ComparedRun) as number) };
  };
  const throughput = line('request throughput', 0, (run) => run.summary.throughput.requestsPerSecond);
  const latencies = ([['ttft p99', 'ttft'], ['total_latency p99', 'total_latency'], ['server_latency p99', 'server_latency']] as const)
    .map(([name, column], index) => line(name, index, (run) => (run.summary.latencies[column] ? (run.summary.latencies[column] as Statistics).p99 * 1000 : undefined)))
    .filter((series): series is LineSeries => series !== undefined);
  return [
    ...(throughput ? [chart('compare-trend-throughput', `Request throughput against ${setting}`, 'requests per second', [throughput])] : []),
    ...(latencies.length > 0 ? [chart('compare-trend-p99-latency', `p99 latency against ${setting}`, 'p99 latency (ms)', latencies)] : []),
  ];
}

/**
 * Writes the comparison: compare.csv (the side-by-side table), compare-nodes.csv (routing runs), charts/compare-cdf-*
 * (.svg and .png) and compare.html (the table and the overlaid CDFs, self-contained). Returns the paths written.
 */
export async function writeComparison(runs: readonly ComparedRun[], outputDirectory: string, options: ComparisonOptions = {}): Promise<string[]> {
  const rows = comparisonRows(runs, options);
  const written: string[] = [];
  const write = async (name: string, content: string | Uint8Array): Promise<void> => {
    const path = join(outputDirectory, name);
    await writeFileAtomic(path, content);
    written.push(path);
  };
  await write('compare.csv', comparisonCsv(runs, rows));
  const nodes = nodesCsv(runs);
  if (nodes !== undefined) await write('compare-nodes.csv', nodes);
  const figures: string[] = [];
  for (const chart of comparisonCharts(runs)) {
    const svg = renderSvg(chart.chart);
    await write(join('charts', `${chart.name}.svg`), svg);
    await write(join('charts', `${chart.name}.png`), await renderPng(svg));
    figures.push(`<figure class="chart" data-chart="${escapeHtml(chart.name)}"><figcaption><h3>${escapeHtml(chart.title)}</h3></figcaption>${svg}</figure>`);
  }
  const deltaLabels = deltaColumnLabels(runs, rows);
  const header = `<tr><th>metric</th><th>unit</th>${runs.map((run) => `<th>${escapeHtml(run.label)}${run.run.info.simulated ? ' <small>(virtual time)</small>' : ''}</th>`).join('')}${deltaLabels.map((label) => `<th>${escapeHtml(label)}</th>`).join('')}</tr>`;
  const body = rows
    .map(
      (row) =>
        `<tr><td>${escapeHtml(row.metric)}</td><td>${escapeHtml(row.unit)}</td>${row.values.map((value) => `<td>${escapeHtml(formatValue(value))}</td>`).join('')}${deltaLabels
          .map((_, index) => `<td>${escapeHtml(deltaText(row.deltas?.[index], formatDelta))}</td>`)
          .join('')}</tr>`,
    )
    .join('\n');
  const footnotes = comparisonFootnotes(runs, deltaLabels.length > 0).map((note) => `<p>${escapeHtml(note)}</p>`).join('\n');
  await write(
    'compare.html',
    `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>servelab comparison: ${escapeHtml(runs.map((run) => run.label).join(' vs '))}</title>
<style>body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 2rem auto; max-width: 1100px; padding: 0 1rem; }
table { border-collapse: collapse; font-size: 0.85rem; } th, td { border: 1px solid #ddd; padding: 0.25rem 0.5rem; text-align: right; }
th:first-child, td:first-child, td:nth-child(2) { text-align: left; } figure.chart svg { max-width: 100%; height: auto; }</style>
</head><body>
<h1>servelab comparison</h1>
<table><thead>${header}</thead><tbody>
${body}
</tbody></table>
${footnotes}
${figures.join('\n')}
</body></html>
`,
  );
  return written;
}
