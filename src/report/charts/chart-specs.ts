import { CONCURRENCY_STAGES, concurrencyTimeSeries, rateTimeSeries, sweepIntervals, collectIntervals } from '../../analysis/timeseries.js';
import { empiricalCdf, strideSample } from '../../analysis/cdf.js';
import { deriveColumnArrays } from '../../analysis/derive.js';
import { groupByHost, nodeInFlightEnd, nodeInFlightStart } from '../../analysis/nodes.js';
import { sampledInterTokenLatencies } from '../../analysis/inter-token-gaps.js';
import type { RequestRecord } from '../../types/record.js';
import type { RunData } from '../../types/run.js';
import type { Statistics, Summary } from '../../types/summary.js';
import type { StoredSample } from '../../scrape/server-metrics-file.js';
import { seriesOf } from '../../scrape/server-metrics-file.js';
import type { Bar, ChartDefinition, LegendEntry, LineSeries, Mark } from './chart-model.js';
import { lineOverTime } from './line-over-time.js';
import { pdTransferCharts } from './pd-charts.js';
import { pdScrapedTransferCharts } from './pd-scraped-charts.js';
import { MAX_NODE_LINES, WORST_NODES_NAMED, nodeLines, type NodePoints } from './node-lines.js';
import { nodeLabel, nodesInIndexOrder } from '../nodes/node-order.js';
import { PLOT_HEIGHT_PX, PLOT_WIDTH_PX, TIME_AXIS_TITLE } from './plot-size.js';
import { eventMarks, type EventMark } from './run-events.js';
import { seriesColour } from './series-palette.js';
import { stageColour, stageLegend } from './stage-palette.js';
import { targetRatePhrase } from '../rate-text.js';
import { NOT_MODELLED, unmodelledColumns } from '../unmodelled-stages.js';

const MAX_CDF_POINTS = 400;
const TIMELINE_REQUESTS = 60;
const CDF_SAMPLE_RECORDS = 100_000;

const CDF_COLOUR = '#2c7fb8';
const NODE_SHARE_COLOUR = '#41ab5d';
const TARGET_COLOUR = '#333333';

/** An empirical CDF with percentile marks; the curve is thinned to at most MAX_CDF_POINTS points. */
/** `unit` is what one value of the distribution is (a request, or an inter-token gap for ITL): the y axis's fraction. */
function cdfChart(name: string, label: string, valuesSeconds: ArrayLike<number>, statistics: Statistics | null, unit = 'requests'): ChartDefinition | undefined {
  const points = empiricalCdf(valuesSeconds, MAX_CDF_POINTS);
  if (points.length === 0 || !statistics) return undefined;
  const percentiles = ['p50', 'p90', 'p99'] as const;
  const rules = percentiles.map((key, index) => ({ value: statistics[key] * 1000, colour: seriesColour(index), label: `${key} ${(statistics[key] * 1000).toFixed(2)} ms` }));
  return {
    name,
    title: `${label} CDF`,
    description: `Empirical distribution of ${label} over ${statistics.count} ${unit}, with p50, p90 and p99 marked.`,
    chart: {
      title: `${label}: cumulative distribution`,
      plotWidthPx: PLOT_WIDTH_PX,
      plotHeightPx: PLOT_HEIGHT_PX,
      // From the fastest request, not from 0: a CDF's interest is its spread.
      x: { kind: 'linear', title: `${label} (ms)`, includeZero: false },
      y: { kind: 'linear', title: `fraction of ${unit}`, domain: [0, 1] },
      marks: [
        { kind: 'line', interpolation: 'step-after', strokeWidthPx: 1.5, series: [{ name: label, colour: CDF_COLOUR, xs: points.map((point) => point.value * 1000), ys: points.map((point) => point.fraction) }] },
        { kind: 'rule', axis: 'x', rules, dashPx: [3, 3], strokeWidthPx: 1, labelPlacement: 'along-bottom' },
      ],
      legends: [{ title: 'percentile', entries: percentiles.map((key, index) => ({ label: key, colour: seriesColour(index), symbol: 'dashed-line' })) }],
    },
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

/**
 * The decode server's wait for the KV (received to its waiting queue) less the prefill half's phases: the hops between
 * the servers (the bootstrap handshake, the prefill leg's own trip, the KV's announcement). Undefined unless all are known.
 */
function pdHandshake(record: RequestRecord): number | undefined {
  const wait = diff(record.queueTimeStart, record.serverCreatedTime);
  if (wait === undefined || record.prefillQueueTime === undefined || record.prefillForwardTime === undefined || record.kvTransferTime === undefined) return undefined;
  return wait - record.prefillQueueTime - record.prefillForwardTime - record.kvTransferTime;
}

/**
 * A PD request's components (docs/metrics.md, "Stages in a PD run"): the record's server instants are the decode
 * server's, whose received-to-waiting-queue interval is the wait for the prefill half (not a tokenize), split into the
 * prefill server's queue and forward, the KV transfer, and the hops between; its "prefill" is the prebuilt first step.
 */
const PD_LIFECYCLE_COMPONENTS: readonly [string, (record: RequestRecord) => number | undefined][] = [
  ['router queue', (r) => diff(r.routerSendTime, r.arrivalTime)],
  ['network (to the decode server)', (r) => diff(r.serverCreatedTime, r.routerSendTime)],
  ['prefill server queue', (r) => r.prefillQueueTime],
  ['prefill (prefill server)', (r) => r.prefillForwardTime],
  ['KV transfer', (r) => r.kvTransferTime],
  ['handshake and hops between servers', pdHandshake],
  ['server queue (decode server)', (r) => diff(r.queueTimeEnd, r.queueTimeStart)],
  ['first decode step', (r) => diff(r.serverFirstTokenTime, r.queueTimeEnd)],
  ['first token to client', (r) => diff(r.firstTokenTime, r.serverFirstTokenTime)],
  ['decode', (r) => diff(r.finishTime, r.firstTokenTime)],
];

function diff(end: number | undefined, start: number | undefined): number | undefined {
  return end === undefined || start === undefined ? undefined : end - start;
}

/** What a stacked breakdown shows: its components, how a request is banded, and its words. */
interface Breakdown {
  name: string;
  title: string;
  chartTitle: string;
  components: readonly (readonly [string, (record: RequestRecord) => number | undefined])[];
  /** The components of a prefill/decode run. */
  pdComponents: readonly (readonly [string, (record: RequestRecord) => number | undefined])[];
  /** The latency a request is banded by (its percentile band), from the record. */
  bandBy: (record: RequestRecord) => number | undefined;
  bandName: string;
  description: string;
}

/**
 * Mean of each component for requests grouped by their percentile band of `bandBy` (bands cut at the summary's p50,
 * p90 and p99: one pass, no sort of a million records).
 */
function breakdownChart(records: readonly RequestRecord[], statistics: Statistics | null, tokenizeModelled: boolean, breakdown: Breakdown, pd: boolean): ChartDefinition | undefined {
  if (!statistics) return undefined;
  const components = pd ? breakdown.pdComponents : breakdown.components;
  const bandNames = ['p0–p50', 'p50–p90', 'p90–p99', 'p99–p100'];
  const cuts = [statistics.p50, statistics.p90, statistics.p99];
  const sums = bandNames.map(() => components.map(() => 0));
  const counts = bandNames.map(() => components.map(() => 0));
  const members = bandNames.map(() => 0);
  for (const record of records) {
    if (!record.success) continue;
    const total = breakdown.bandBy(record);
    if (total === undefined) continue;
    let band = 0;
    while (band < cuts.length && total > (cuts[band] as number)) band++;
    members[band]!++;
    components.forEach(([, compute], component) => {
      const value = compute(record);
      if (value === undefined) return;
      sums[band]![component]! += value;
      counts[band]![component]!++;
    });
  }
  // The simulated engine has no tokenizer stage: its tokenize time is 0 by construction, not a measurement of 0.
  const labelOf = (component: string): string => (component === 'tokenize' && !tokenizeModelled ? `tokenize (${NOT_MODELLED})` : component);
  const labels = components.map(([component]) => labelOf(component));
  // Each band's stages stacked left to right in lifecycle order, each starting where the previous one ended.
  const bars: Bar[] = [];
  const categories: string[] = [];
  bandNames.forEach((band, bandIndex) => {
    const category = `${band} (${members[bandIndex]})`;
    let startMs = 0;
    components.forEach(([component], order) => {
      const count = counts[bandIndex]![order]!;
      // A negative mean (PD hops, where the prefill leg reached its server before the decode leg did) has no bar to stack.
      if (count === 0 || sums[bandIndex]![order]! < 0) return;
      const endMs = startMs + (sums[bandIndex]![order]! / count) * 1000;
      if (categories[categories.length - 1] !== category) categories.push(category);
      const stage = labelOf(component);
      bars.push({ category, startX: startMs, endX: endMs, colour: stageColour(stage) });
      startMs = endMs;
    });
  });
  if (bars.length === 0) return undefined;
  return {
    name: breakdown.name,
    title: breakdown.title,
    description: pd
      ? `${breakdown.description} Prefill/decode run: the server stages are the decode server's, its wait for the KV split into the prefill server's queue and prefill, the KV transfer and the hops between the servers (a negative mean of those is not drawn); its first step streams the token the prefill server computed.`
      : `${breakdown.description}${tokenizeModelled ? '' : ` The simulated engine does not model tokenization: its tokenize time is 0 by construction (${NOT_MODELLED}), not a measured 0.`}`,
    chart: {
      title: breakdown.chartTitle,
      plotWidthPx: PLOT_WIDTH_PX,
      plotHeightPx: PLOT_HEIGHT_PX,
      x: { kind: 'linear', title: 'mean time (ms)' },
      y: { kind: 'band', title: `${breakdown.bandName} band (requests)`, categories, showLabels: true },
      marks: [{ kind: 'bar', bars }],
      legends: [stageLegend('stage', labels)],
    },
  };
}

const LIFECYCLE_BREAKDOWN: Breakdown = {
  name: 'lifecycle-breakdown',
  title: 'Lifecycle breakdown by latency percentile',
  chartTitle: 'Where the time goes, by end-to-end latency band',
  components: LIFECYCLE_COMPONENTS,
  pdComponents: PD_LIFECYCLE_COMPONENTS,
  bandBy: (record) => diff(record.finishTime, record.arrivalTime),
  bandName: 'latency',
  description:
    'Requests grouped by their end-to-end latency percentile band; each bar stacks the mean time spent in each stage of the lifecycle (router queue, network, tokenize, server queue, prefill, first token delivery, decode). Decode usually dominates: the TTFT breakdown below shows the stages before the first token on their own scale.',
};

/** The stages before the first token: decode left out, so that a millisecond of queueing is not lost beside seconds of decode. */
const TTFT_BREAKDOWN: Breakdown = {
  name: 'ttft-breakdown',
  title: 'TTFT breakdown by TTFT percentile',
  chartTitle: 'Where the time to first token goes, by TTFT band',
  components: LIFECYCLE_COMPONENTS.filter(([component]) => component !== 'decode'),
  pdComponents: PD_LIFECYCLE_COMPONENTS.filter(([component]) => component !== 'decode'),
  bandBy: (record) => diff(record.firstTokenTime, record.arrivalTime),
  bandName: 'TTFT',
  description:
    'Requests grouped by their TTFT percentile band; each bar stacks the mean time spent in each stage before the first token reached the client (router queue, network, tokenize, server queue, prefill, first token delivery), decode left out.',
};

/** A Gantt chart of a uniform sample of requests: when each was in the router, waiting on the server, in prefill, decoding. */
function timelineChart(records: readonly RequestRecord[], t0: number, events: readonly EventMark[]): ChartDefinition | undefined {
  const sent = records.filter((record) => record.arrivalTime !== undefined);
  if (sent.length === 0) return undefined;
  const step = Math.max(1, Math.ceil(sent.length / TIMELINE_REQUESTS));
  // Sample first (records come in dispatch order), then order the sample by arrival.
  const sample: RequestRecord[] = [];
  for (let index = 0; index < sent.length; index += step) sample.push(sent[index] as RequestRecord);
  sample.sort((a, b) => (a.arrivalTime as number) - (b.arrivalTime as number));
  const bars: Bar[] = [];
  const phases: string[] = [];
  const categories = new Set<string>();
  for (const record of sample) {
    const label = `#${record.datasetIndex}`;
    categories.add(label);
    const push = (phase: string, start: number | undefined, end: number | undefined): void => {
      if (start === undefined || end === undefined || end < start) return;
      bars.push({ category: label, startX: start - t0, endX: end - t0, colour: stageColour(phase) });
      phases.push(phase);
    };
    if (!record.success) {
      push(`failed (${record.error ?? 'unknown'})`, record.arrivalTime, record.finishTime ?? (record.arrivalTime as number) + 0.001);
      continue;
    }
    push('router queue', record.arrivalTime, record.routerSendTime);
    if (record.queueTimeEnd !== undefined && record.serverFirstTokenTime !== undefined) {
      // A PD request's server instants are the decode server's: it waits for the prefill half, then takes a first step.
      const pd = record.prefillHost !== undefined;
      push(pd ? 'waiting on server (decode server: prefill half, KV, queue)' : 'waiting on server', record.routerSendTime ?? record.arrivalTime, record.queueTimeEnd);
      push(pd ? 'first decode step' : 'prefill', record.queueTimeEnd, record.serverFirstTokenTime);
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
    chart: {
      title: 'Request timeline (a uniform sample, in arrival order)',
      plotWidthPx: PLOT_WIDTH_PX,
      plotHeightPx: Math.max(PLOT_HEIGHT_PX, categories.size * 8),
      x: { kind: 'linear', title: TIME_AXIS_TITLE },
      // One 8 px row per request: its number says nothing to a reader, so only the row shows.
      y: { kind: 'band', title: 'request', categories: [...categories], showLabels: false },
      marks: [{ kind: 'bar', bars, thicknessPx: 6 }, ...eventMarks(events)],
      legends: [stageLegend('stage', phases)],
    },
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

/** The scraped gauges charted, with their titles: the only series read back from server-metrics.csv. */
export const SCRAPED_GAUGE_CHARTS = [
  ['sglang:num_running_reqs', 'Running requests (server-reported)'],
  ['sglang:num_queue_reqs', 'Queued requests (server-reported)'],
  ['sglang:token_usage', 'KV token usage (server-reported)'],
] as const;

/** What a per-node chart of many nodes draws instead of a line per node (see nodeLines). */
function manyNodesText(nodeCount: number): string {
  return nodeCount > MAX_NODE_LINES ? `; with ${nodeCount} nodes, the median and p90 across nodes at each instant and the ${WORST_NODES_NAMED} nodes with the highest mean, named` : '';
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
  // Gaps are thinned too: 10,000 requests of 500 tokens have 5 million gaps, whose pooling and sort took 0.9 s of CPU
  // to draw the same 400-point curve that CDF_SAMPLE_RECORDS of them draw.
  const gaps = sampledInterTokenLatencies(strideSample(sampled, CDF_SAMPLE_RECORDS / 10), CDF_SAMPLE_RECORDS);
  charts.push(cdfChart('cdf-itl', 'ITL', gaps, summary.interTokenLatency, 'inter-token gaps'));
  charts.push(cdfChart('cdf-total-latency', 'End-to-end latency', columns.total_latency, summary.latencies.total_latency));
  const tokenizeModelled = !unmodelledColumns(run).has('tokenize_time');
  const pd = summary.pd !== undefined;
  charts.push(breakdownChart(records, summary.latencies.total_latency, tokenizeModelled, LIFECYCLE_BREAKDOWN, pd));
  charts.push(breakdownChart(records, summary.latencies.ttft, tokenizeModelled, TTFT_BREAKDOWN, pd));
  charts.push(timelineChart(records, t0, events));

  const series = concurrencyTimeSeries(run.records);
  if (series) {
    const offset = series.windowStart - t0;
    const times = Float64Array.from({ length: series.binCount }, (_, bin) => offset + bin * series.resolutionSeconds);
    const stageSeries: LineSeries[] = [];
    for (const stage of CONCURRENCY_STAGES) {
      const values = series.stages[stage];
      if (values) stageSeries.push({ name: stage, colour: stageColour(stage), xs: times, ys: values.mean });
    }
    charts.push(
      lineOverTime({
        name: 'concurrency',
        title: 'Concurrency over time, per stage',
        description: `Time-weighted mean number of requests in each stage per ${series.resolutionSeconds} s bin, reconstructed from the records; failure events are marked.`,
        series: stageSeries,
        yTitle: 'requests',
        legendTitle: 'stage',
        events,
      }),
    );
  }
  // Rates in coarser bins than concurrency (see rateBinning): a count over a 50 ms bin is a multiple of 20 req/s.
  const rates = rateTimeSeries(run.records);
  if (rates) {
    const binText = `${Number(rates.binSeconds.toPrecision(3))} s`;
    // Bin starts, plus the window's end repeating the last bin: a step-after line then draws the last bin's width too.
    const times = Float64Array.from({ length: rates.binCount + 1 }, (_, bin) => rates.windowStart - t0 + bin * rates.binSeconds);
    const withEnd = (values: ArrayLike<number>): Float64Array => Float64Array.from({ length: rates.binCount + 1 }, (_, bin) => values[Math.min(bin, rates.binCount - 1)] as number);
    charts.push(
      lineOverTime({
        name: 'throughput',
        title: 'Completions and failures over time',
        description: `Requests completed (by finish time) and failed (when the client saw the failure) per second, in ${binText} bins; failure events are marked.`,
        series: [
          { name: 'completed/s', colour: seriesColour(0), xs: times, ys: withEnd(rates.completionsPerSecond) },
          { name: 'failed/s', colour: seriesColour(2), xs: times, ys: withEnd(rates.failuresPerSecond) },
        ],
        yTitle: 'requests per second',
        legendTitle: 'outcome',
        events,
      }),
    );
    const target = summary.offeredLoad.targetRate;
    // The target is named in the legend, not on the plot, where the arrivals line would cross its label.
    const hasTarget = target !== null && Number.isFinite(target);
    const targetMarks: Mark[] = hasTarget ? [{ kind: 'rule', axis: 'y', rules: [{ value: target, colour: TARGET_COLOUR }], dashPx: [6, 3], strokeWidthPx: 1.5, labelPlacement: 'end' }] : [];
    const targetEntries: LegendEntry[] = hasTarget ? [{ label: `target ${Number(target.toPrecision(4))} req/s`, colour: TARGET_COLOUR, symbol: 'dashed-line' }] : [];
    const load = summary.offeredLoad;
    charts.push(
      lineOverTime({
        name: 'offered-load',
        title: 'Offered load: arrivals per second vs target',
        description: `Arrivals per second in ${binText} bins against the target rate (dashed when there is one; this run: ${targetRatePhrase(target)}). Scheduled ${load.scheduledRate?.toFixed(2) ?? '-'} req/s, achieved ${load.achievedRate?.toFixed(2) ?? '-'} req/s, inter-arrival CV ${load.interArrivalCv?.toFixed(3) ?? '-'}.`,
        series: [{ name: 'achieved arrivals/s', colour: seriesColour(0), xs: times, ys: withEnd(rates.arrivalsPerSecond) }],
        yTitle: 'arrivals per second',
        legendTitle: 'series',
        events,
        extra: targetMarks,
        extraLegendEntries: targetEntries,
      }),
    );
  }

  if (summary.routing) {
    const routingNodes = summary.routing.nodes;
    const nodes = nodesInIndexOrder(routingNodes);
    charts.push({
      name: 'node-share',
      title: 'Requests per node',
      description: `Share of requests each server received. Imbalance: max/mean ${summary.routing.imbalanceMaxOverMean.toFixed(3)}, CV ${summary.routing.imbalanceCv.toFixed(3)}.`,
      chart: {
        title: 'Requests per node',
        plotWidthPx: PLOT_WIDTH_PX,
        plotHeightPx: Math.max(120, nodes.length * 22),
        x: { kind: 'linear', title: 'requests' },
        y: { kind: 'band', title: 'node', categories: nodes.map(nodeLabel), showLabels: true },
        marks: [
          {
            kind: 'bar',
            bars: nodes.map((node) => ({ category: nodeLabel(node), startX: 0, endX: node.requests, colour: NODE_SHARE_COLOUR, label: `${(node.share * 100).toFixed(1)}%` })),
          },
        ],
        legends: [],
      },
    });
    if (series) {
      const inFlight: NodePoints[] = [];
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
        inFlight.push({ host, xs: Float64Array.from(means, (_, bin) => series.windowStart - t0 + bin * series.resolutionSeconds), ys: means });
      }
      charts.push(
        lineOverTime({
          name: 'node-in-flight',
          title: 'In flight per node over time',
          description: `Time-weighted mean number of requests in flight on each node (router send to finish)${manyNodesText(inFlight.length)}; failure events are marked.`,
          series: nodeLines(inFlight, routingNodes),
          yTitle: 'requests in flight',
          legendTitle: 'node',
          events,
        }),
      );
    }
  }

  charts.push(...pdTransferCharts(summary, events));
  charts.push(...pdScrapedTransferCharts(serverSamples, events));

  for (const [metric, label] of SCRAPED_GAUGE_CHARTS) {
    const perUrl = seriesOf(serverSamples, metric);
    if (perUrl.size === 0) continue;
    const gauges: NodePoints[] = [...perUrl].map(([url, points]) => ({ host: url, xs: points.map(([time]) => time), ys: points.map(([, value]) => value) }));
    const interval = samplingIntervalText(perUrl);
    // Only a queue can form and drain between two readings; running requests and KV usage are levels, read as such.
    const caveat = metric === 'sglang:num_queue_reqs' ? `A gauge read every ${interval}: a queue that forms and drains between two readings never shows, so short queues look flat.` : undefined;
    const queueNote = metric === 'sglang:num_queue_reqs' ? ` ${caveat} The request records' waiting_in_server_queue (concurrency chart) sees every queued request.` : '';
    charts.push(
      lineOverTime({
        name: `server-${metric.slice('sglang:'.length).replaceAll('_', '-')}`,
        title: label,
        ...(caveat === undefined ? {} : { subtitle: caveat }),
        description: `${metric} scraped from each server's /metrics on the run's clock, every ${interval} (the median gap between readings)${manyNodesText(gauges.length)}.${queueNote}`,
        series: nodeLines(gauges, summary.routing?.nodes ?? []),
        yTitle: `${metric} (sampled)`,
        legendTitle: 'server',
        events,
      }),
    );
  }
  return charts.filter((chart): chart is ChartDefinition => chart !== undefined);
}
