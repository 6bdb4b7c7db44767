import type { TopLevelSpec } from 'vega-lite';
import { CONCURRENCY_STAGES, concurrencyTimeSeries, rateTimeSeries, sweepIntervals, collectIntervals } from '../../analysis/timeseries.js';
import { empiricalCdf, strideSample } from '../../analysis/cdf.js';
import { deriveColumnArrays } from '../../analysis/derive.js';
import { groupByHost, nodeInFlightEnd, nodeInFlightStart } from '../../analysis/nodes.js';
import { pooledInterTokenLatencies } from '../../analysis/summarize.js';
import type { RequestRecord } from '../../types/record.js';
import type { RunData } from '../../types/run.js';
import type { Statistics, Summary } from '../../types/summary.js';
import type { StoredSample } from '../../scrape/server-metrics-file.js';
import { seriesOf } from '../../scrape/server-metrics-file.js';
import { stageColourScale } from './stage-palette.js';
import { targetRatePhrase } from '../rate-text.js';
import { NOT_MODELLED, unmodelledColumns } from '../unmodelled-stages.js';

/** One chart of the report: file name (without extension), title, what it shows, and its Vega-Lite spec. */
export interface ChartDefinition {
  name: string;
  title: string;
  description: string;
  spec: TopLevelSpec;
}

const WIDTH = 640;
const HEIGHT = 220;
const MAX_CDF_POINTS = 400;
const TIMELINE_REQUESTS = 60;
const CDF_SAMPLE_RECORDS = 100_000;

interface EventMark {
  time: number;
  label: string;
}

const base = (title: string): Partial<TopLevelSpec> => ({
  $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
  title,
  width: WIDTH,
  height: HEIGHT,
  background: 'white',
  config: { font: 'DejaVu Sans, Helvetica, Arial, sans-serif', view: { stroke: '#ddd' }, legend: { labelLimit: 360 } },
});

/** Vertical rules with labels at the run's events (node failures, restores), on a time axis in seconds after t0. */
function eventLayers(events: readonly EventMark[]): object[] {
  if (events.length === 0) return [];
  return [
    {
      data: { values: events },
      mark: { type: 'rule', color: '#c0392b', strokeDash: [4, 3], strokeWidth: 1.5 },
      encoding: { x: { field: 'time', type: 'quantitative' } },
    },
    {
      data: { values: events },
      mark: { type: 'text', color: '#c0392b', align: 'left', baseline: 'top', dx: 3, dy: 2, fontSize: 10 },
      encoding: { x: { field: 'time', type: 'quantitative' }, y: { value: 0 }, text: { field: 'label' } },
    },
  ];
}

/** An empirical CDF with percentile marks; the curve is thinned to at most MAX_CDF_POINTS points. */
/** `unit` is what one value of the distribution is (a request, or an inter-token gap for ITL): the y axis's fraction. */
function cdfChart(name: string, label: string, valuesSeconds: ArrayLike<number>, statistics: Statistics | null, unit = 'requests'): ChartDefinition | undefined {
  const points = empiricalCdf(valuesSeconds, MAX_CDF_POINTS);
  if (points.length === 0 || !statistics) return undefined;
  const curve = points.map((point) => ({ ms: point.value * 1000, fraction: point.fraction }));
  const marks = (['p50', 'p90', 'p99'] as const).map((key) => ({ percentile: key, ms: statistics[key] * 1000, label: `${key} ${(statistics[key] * 1000).toFixed(2)} ms` }));
  return {
    name,
    title: `${label} CDF`,
    description: `Empirical distribution of ${label} over ${statistics.count} ${unit}, with p50, p90 and p99 marked.`,
    spec: {
      ...base(`${label}: cumulative distribution`),
      layer: [
        {
          data: { values: curve },
          mark: { type: 'line', interpolate: 'step-after', color: '#2c7fb8' },
          encoding: {
            x: { field: 'ms', type: 'quantitative', title: `${label} (ms)` },
            y: { field: 'fraction', type: 'quantitative', title: `fraction of ${unit}`, scale: { domain: [0, 1] } },
          },
        },
        {
          data: { values: marks },
          mark: { type: 'rule', strokeDash: [3, 3] },
          encoding: { x: { field: 'ms', type: 'quantitative' }, color: { field: 'percentile', type: 'nominal', title: 'percentile', legend: { orient: 'bottom-right' } } },
        },
        {
          data: { values: marks },
          mark: { type: 'text', angle: 270, align: 'left', dy: -4, fontSize: 10 },
          encoding: { x: { field: 'ms', type: 'quantitative' }, y: { value: HEIGHT - 4 }, text: { field: 'label' } },
        },
      ],
    } as TopLevelSpec,
  };
}

/** Additive components of a request's latency, in lifecycle order (they sum to total_latency when all are known). */
const LIFECYCLE_COMPONENTS: readonly [string, (record: RequestRecord) => number | undefined][] = [
  ['router queue', (r) => diff(r.routerSendTime, r.arrivalTime)],
  ['network', (r) => diff(r.serverCreatedTime, r.routerSendTime)],
  ['tokenize', (r) => diff(r.queueTimeStart, r.serverCreatedTime)],
  ['server queue', (r) => diff(r.queueTimeEnd, r.queueTimeStart)],
  ['prefill', (r) => diff(r.serverFirstTokenTime, r.queueTimeEnd)],
  ['first token to client', (r) => diff(r.firstTokenTime, r.serverFirstTokenTime)],
  ['decode', (r) => diff(r.finishTime, r.firstTokenTime)],
];

function diff(end: number | undefined, start: number | undefined): number | undefined {
  return end === undefined || start === undefined ? undefined : end - start;
}

/**
 * Mean of each lifecycle component for requests grouped by their total-latency percentile band (bands cut at the
 * summary's p50, p90 and p99 of total_latency: one pass, no sort of a million records).
 */
function lifecycleChart(records: readonly RequestRecord[], totalLatency: Statistics | null, tokenizeModelled: boolean): ChartDefinition | undefined {
  if (!totalLatency) return undefined;
  const bandNames = ['p0–p50', 'p50–p90', 'p90–p99', 'p99–p100'];
  const cuts = [totalLatency.p50, totalLatency.p90, totalLatency.p99];
  const sums = bandNames.map(() => LIFECYCLE_COMPONENTS.map(() => 0));
  const counts = bandNames.map(() => LIFECYCLE_COMPONENTS.map(() => 0));
  const members = bandNames.map(() => 0);
  for (const record of records) {
    if (!record.success || record.finishTime === undefined || record.arrivalTime === undefined) continue;
    const total = record.finishTime - record.arrivalTime;
    let band = 0;
    while (band < cuts.length && total > (cuts[band] as number)) band++;
    members[band]!++;
    LIFECYCLE_COMPONENTS.forEach(([, compute], component) => {
      const value = compute(record);
      if (value === undefined) return;
      sums[band]![component]! += value;
      counts[band]![component]!++;
    });
  }
  // The simulated engine has no tokenizer stage: its tokenize time is 0 by construction, not a measurement of 0.
  const labelOf = (component: string): string => (component === 'tokenize' && !tokenizeModelled ? `tokenize (${NOT_MODELLED})` : component);
  const labels = LIFECYCLE_COMPONENTS.map(([component]) => labelOf(component));
  const rows: { band: string; component: string; order: number; ms: number }[] = [];
  bandNames.forEach((band, bandIndex) => {
    LIFECYCLE_COMPONENTS.forEach(([component], order) => {
      const count = counts[bandIndex]![order]!;
      if (count > 0) rows.push({ band: `${band} (${members[bandIndex]})`, component: labelOf(component), order, ms: (sums[bandIndex]![order]! / count) * 1000 });
    });
  });
  if (rows.length === 0) return undefined;
  return {
    name: 'lifecycle-breakdown',
    title: 'Lifecycle breakdown by latency percentile',
    description:
      `Requests grouped by their end-to-end latency percentile band; each bar stacks the mean time spent in each stage of the lifecycle (router queue, network, tokenize, server queue, prefill, first token delivery, decode).${tokenizeModelled ? '' : ` The simulated engine does not model tokenization: its tokenize time is 0 by construction (${NOT_MODELLED}), not a measured 0.`}`,
    spec: {
      ...base('Where the time goes, by end-to-end latency band'),
      data: { values: rows },
      mark: 'bar',
      encoding: {
        y: { field: 'band', type: 'nominal', title: 'latency band (requests)', sort: null },
        x: { field: 'ms', type: 'quantitative', title: 'mean time (ms)', stack: 'zero' },
        color: { field: 'component', type: 'nominal', title: 'stage', sort: labels, scale: stageColourScale(labels) },
        order: { field: 'order', type: 'quantitative' },
        tooltip: [{ field: 'component' }, { field: 'ms', format: '.2f' }],
      },
    } as TopLevelSpec,
  };
}

/** A Gantt chart of a uniform sample of requests: when each was in the router, waiting on the server, in prefill, decoding. */
function timelineChart(records: readonly RequestRecord[], t0: number, events: readonly EventMark[]): ChartDefinition | undefined {
  const sent = records.filter((record) => record.arrivalTime !== undefined);
  if (sent.length === 0) return undefined;
  const step = Math.max(1, Math.ceil(sent.length / TIMELINE_REQUESTS));
  // Sample first (records come in dispatch order), then order the sample by arrival.
  const sample: RequestRecord[] = [];
  for (let index = 0; index < sent.length; index += step) sample.push(sent[index] as RequestRecord);
  sample.sort((a, b) => (a.arrivalTime as number) - (b.arrivalTime as number));
  const rows: { request: string; phase: string; start: number; end: number }[] = [];
  for (const record of sample) {
    const label = `#${record.datasetIndex}`;
    const push = (phase: string, start: number | undefined, end: number | undefined): void => {
      if (start === undefined || end === undefined || end < start) return;
      rows.push({ request: label, phase, start: start - t0, end: end - t0 });
    };
    if (!record.success) {
      push(`failed (${record.error ?? 'unknown'})`, record.arrivalTime, record.finishTime ?? (record.arrivalTime as number) + 0.001);
      continue;
    }
    push('router queue', record.arrivalTime, record.routerSendTime);
    if (record.queueTimeEnd !== undefined && record.serverFirstTokenTime !== undefined) {
      push('waiting on server', record.routerSendTime ?? record.arrivalTime, record.queueTimeEnd);
      push('prefill', record.queueTimeEnd, record.serverFirstTokenTime);
      push('first token to client', record.serverFirstTokenTime, record.firstTokenTime);
    } else {
      push('until first token', record.routerSendTime ?? record.arrivalTime, record.firstTokenTime);
    }
    push('decode', record.firstTokenTime, record.finishTime);
  }
  return {
    name: 'request-timeline',
    title: 'Request timeline (sample)',
    description: `Every ${step === 1 ? '' : `${step}th `}request in arrival order (${Math.ceil(sent.length / step)} of ${sent.length}), its lifecycle stages on the run's time axis.`,
    spec: {
      ...base('Request timeline (a uniform sample, in arrival order)'),
      height: Math.max(HEIGHT, Math.ceil(sent.length / step) * 8),
      layer: [
        {
          data: { values: rows },
          mark: { type: 'bar', height: 6 },
          encoding: {
            y: { field: 'request', type: 'ordinal', sort: null, title: 'request', axis: { labels: false, ticks: false } },
            x: { field: 'start', type: 'quantitative', title: 'time since t0 (s)' },
            x2: { field: 'end' },
            color: { field: 'phase', type: 'nominal', title: 'stage', scale: stageColourScale(rows.map((row) => row.phase)) },
            tooltip: [{ field: 'request' }, { field: 'phase' }, { field: 'start', format: '.4f' }, { field: 'end', format: '.4f' }],
          },
        },
        ...eventLayers(events),
      ],
    } as TopLevelSpec,
  };
}

function lineOverTime(
  name: string,
  title: string,
  description: string,
  rows: object[],
  yTitle: string,
  colorTitle: string,
  events: readonly EventMark[],
  extra: object[] = [],
  colourScale?: { domain: string[]; range: string[] },
  subtitle?: string,
): ChartDefinition {
  return {
    name,
    title,
    description,
    spec: {
      ...base(title),
      ...(subtitle === undefined ? {} : { title: { text: title, subtitle } }),
      layer: [
        {
          data: { values: rows },
          mark: { type: 'line', interpolate: 'step-after', strokeWidth: 1.5 },
          encoding: {
            x: { field: 'time', type: 'quantitative', title: 'time since t0 (s)' },
            y: { field: 'value', type: 'quantitative', title: yTitle },
            color: { field: 'series', type: 'nominal', title: colorTitle, ...(colourScale === undefined ? {} : { scale: colourScale }) },
          },
        },
        ...extra,
        ...eventLayers(events),
      ],
    } as TopLevelSpec,
  };
}

/** The median gap between consecutive readings of a scraped series, over every server: what a gauge chart can resolve. */
function samplingIntervalText(perUrl: ReadonlyMap<string, readonly [number, number][]>): string {
  const gaps: number[] = [];
  for (const points of perUrl.values()) for (let index = 1; index < points.length; index++) gaps.push((points[index]![0]) - (points[index - 1]![0]));
  if (gaps.length === 0) return 'scrape (a single reading per server)';
  gaps.sort((a, b) => a - b);
  const median = gaps[Math.floor(gaps.length / 2)] as number;
  return `${Number(median.toPrecision(2))} s`;
}

/** Every chart that the run's data supports, in report order. */
export function chartDefinitions(run: RunData, summary: Summary, serverSamples: readonly StoredSample[] = []): ChartDefinition[] {
  const records = run.records.filter((record) => !record.warmup);
  const t0 = run.info.startTime;
  const events: EventMark[] = run.events.map((event) => ({
    time: event.time - t0,
    label: `${event.kind}${event.node === undefined ? '' : ` node ${event.node}`}`,
  }));
  const charts: (ChartDefinition | undefined)[] = [];
  // Curves from an even sample of at most CDF_SAMPLE_RECORDS requests (a million draw the same curve); the percentile
  // marks and the statistics in the tables are exact.
  const sampled = strideSample(records.filter((record) => record.success), CDF_SAMPLE_RECORDS);
  const columns = deriveColumnArrays(sampled);
  charts.push(cdfChart('cdf-ttft', 'TTFT', columns.ttft, summary.latencies.ttft));
  charts.push(cdfChart('cdf-tpot', 'TPOT', columns.tpot, summary.latencies.tpot));
  charts.push(cdfChart('cdf-itl', 'ITL', pooledInterTokenLatencies(strideSample(sampled, CDF_SAMPLE_RECORDS / 10)), summary.interTokenLatency, 'inter-token gaps'));
  charts.push(cdfChart('cdf-total-latency', 'End-to-end latency', columns.total_latency, summary.latencies.total_latency));
  charts.push(lifecycleChart(records, summary.latencies.total_latency, !unmodelledColumns(run).has('tokenize_time')));
  charts.push(timelineChart(records, t0, events));

  const series = concurrencyTimeSeries(run.records);
  if (series) {
    const offset = series.windowStart - t0;
    const time = (bin: number): number => offset + bin * series.resolutionSeconds;
    const concurrencyRows: object[] = [];
    for (const stage of CONCURRENCY_STAGES) {
      const values = series.stages[stage];
      if (!values) continue;
      for (let bin = 0; bin < series.binCount; bin++) concurrencyRows.push({ time: time(bin), series: stage, value: values.mean[bin] });
    }
    charts.push(
      lineOverTime(
        'concurrency',
        'Concurrency over time, per stage',
        `Time-weighted mean number of requests in each stage per ${series.resolutionSeconds} s bin, reconstructed from the records; failure events are marked.`,
        concurrencyRows,
        'requests',
        'stage',
        events,
        [],
        stageColourScale(CONCURRENCY_STAGES.filter((stage) => series.stages[stage] !== undefined)),
      ),
    );
  }
  // Rates in coarser bins than concurrency (see rateBinning): a count over a 50 ms bin is a multiple of 20 req/s.
  const rates = rateTimeSeries(run.records);
  if (rates) {
    const rateTime = (bin: number): number => rates.windowStart - t0 + bin * rates.binSeconds;
    const binText = `${Number(rates.binSeconds.toPrecision(3))} s`;
    const rateRows: object[] = [];
    // Bin starts, plus the window's end repeating the last bin: a step-after line then draws the last bin's width too.
    for (let bin = 0; bin <= rates.binCount; bin++) {
      const index = Math.min(bin, rates.binCount - 1);
      rateRows.push({ time: rateTime(bin), series: 'completed/s', value: rates.completionsPerSecond[index] });
      rateRows.push({ time: rateTime(bin), series: 'failed/s', value: rates.failuresPerSecond[index] });
    }
    charts.push(
      lineOverTime(
        'throughput',
        'Completions and failures over time',
        `Requests completed (by finish time) and failed (when the client saw the failure) per second, in ${binText} bins; failure events are marked.`,
        rateRows,
        'requests per second',
        'outcome',
        events,
      ),
    );
    const arrivalRows: object[] = [];
    for (let bin = 0; bin <= rates.binCount; bin++) {
      arrivalRows.push({ time: rateTime(bin), series: 'achieved arrivals/s', value: rates.arrivalsPerSecond[Math.min(bin, rates.binCount - 1)] });
    }
    const target = summary.offeredLoad.targetRate;
    const targetLayer = target !== null && Number.isFinite(target)
      ? [{ data: { values: [{ target }] }, mark: { type: 'rule', color: '#333', strokeDash: [6, 3] }, encoding: { y: { field: 'target', type: 'quantitative' } } }]
      : [];
    const load = summary.offeredLoad;
    charts.push(
      lineOverTime(
        'offered-load',
        'Offered load: arrivals per second vs target',
        `Arrivals per second in ${binText} bins against the target rate (dashed when there is one; this run: ${targetRatePhrase(target)}). Scheduled ${load.scheduledRate?.toFixed(2) ?? '-'} req/s, achieved ${load.achievedRate?.toFixed(2) ?? '-'} req/s, inter-arrival CV ${load.interArrivalCv?.toFixed(3) ?? '-'}.`,
        arrivalRows,
        'arrivals per second',
        'series',
        events,
        targetLayer,
      ),
    );
  }

  if (summary.routing) {
    const nodes = summary.routing.nodes;
    charts.push({
      name: 'node-share',
      title: 'Requests per node',
      description: `Share of requests each server received. Imbalance: max/mean ${summary.routing.imbalanceMaxOverMean.toFixed(3)}, CV ${summary.routing.imbalanceCv.toFixed(3)}.`,
      spec: {
        ...base('Requests per node'),
        height: Math.max(120, nodes.length * 22),
        data: { values: nodes.map((node) => ({ host: node.host, requests: node.requests, share: `${(node.share * 100).toFixed(1)}%` })) },
        layer: [
          { mark: { type: 'bar', color: '#41ab5d' }, encoding: { y: { field: 'host', type: 'nominal', sort: null, title: 'node' }, x: { field: 'requests', type: 'quantitative' } } },
          { mark: { type: 'text', align: 'left', dx: 3 }, encoding: { y: { field: 'host', type: 'nominal', sort: null }, x: { field: 'requests', type: 'quantitative' }, text: { field: 'share' } } },
        ],
      } as TopLevelSpec,
    });
    if (series) {
      const inFlightRows: object[] = [];
      const groups = groupByHost(records);
      for (const [host, indices] of groups) {
        const nodeRecords = indices.map((index) => records[index] as RequestRecord);
        const sweep = sweepIntervals(
          collectIntervals(nodeRecords, nodeInFlightStart, nodeInFlightEnd),
          series.windowStart,
          series.windowStart + series.binCount * series.resolutionSeconds,
          series.resolutionSeconds,
        );
        const means = sweep.binMeans ?? new Float64Array(0);
        for (let bin = 0; bin < means.length; bin++) inFlightRows.push({ time: series.windowStart - t0 + bin * series.resolutionSeconds, series: host, value: means[bin] });
      }
      charts.push(lineOverTime('node-in-flight', 'In flight per node over time', 'Time-weighted mean number of requests in flight on each node (router send to finish); failure events are marked.', inFlightRows, 'requests in flight', 'node', events));
    }
  }

  for (const [metric, label] of [
    ['sglang:num_running_reqs', 'Running requests (server-reported)'],
    ['sglang:num_queue_reqs', 'Queued requests (server-reported)'],
    ['sglang:token_usage', 'KV token usage (server-reported)'],
  ] as const) {
    const perUrl = seriesOf(serverSamples, metric);
    if (perUrl.size === 0) continue;
    const rows: object[] = [];
    for (const [url, points] of perUrl) for (const [time, value] of points) rows.push({ time, series: url, value });
    const interval = samplingIntervalText(perUrl);
    const caveat = `A gauge read every ${interval}: a queue that forms and drains between two readings never shows, so short queues look flat.`;
    charts.push(
      lineOverTime(
        `server-${metric.slice('sglang:'.length).replaceAll('_', '-')}`,
        label,
        `${metric} scraped from each server's /metrics on the run's clock, every ${interval} (the median gap between readings). ${caveat} The request records' waiting_in_server_queue (concurrency chart) sees every queued request.`,
        rows,
        `${metric} (sampled)`,
        'server',
        events,
        [],
        undefined,
        caveat,
      ),
    );
  }
  return charts.filter((chart): chart is ChartDefinition => chart !== undefined);
}
