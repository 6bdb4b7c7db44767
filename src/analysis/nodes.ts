import type { RequestRecord } from '../types/record.js';
import type { TestLevel } from '../types/run.js';
import type { DerivedColumnName, NodeSummary, RoutingSummary } from '../types/summary.js';
import { deriveColumnArrays } from './derive.js';
import { computeStatistics } from './statistics.js';
import { analysisWindow, collectIntervals, sweepIntervals } from './timeseries.js';

/** Marks the derived values of failed requests as missing (NaN), in place: latency statistics cover successes only. */
export function succeededOnly(
  records: readonly RequestRecord[],
  columns: Record<DerivedColumnName, Float64Array>,
  keep: ReadonlySet<DerivedColumnName> = new Set(),
): Record<DerivedColumnName, Float64Array> {
  const failedIndices: number[] = [];
  for (let index = 0; index < records.length; index++) if (!records[index]?.success) failedIndices.push(index);
  for (const [name, values] of Object.entries(columns) as [DerivedColumnName, Float64Array][]) {
    if (keep.has(name)) continue;
    for (const index of failedIndices) values[index] = Number.NaN;
  }
  return columns;
}

/** In flight on a node: from the router's send (the arrival in a node test) to the finish. */
export const nodeInFlightStart = (record: RequestRecord): number | undefined => record.routerSendTime ?? record.arrivalTime;
export const nodeInFlightEnd = (record: RequestRecord): number | undefined => record.finishTime;

/** Indices of the records per host (records without a host are left out). */
export function groupByHost(records: readonly RequestRecord[]): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  for (let index = 0; index < records.length; index++) {
    const host = records[index]?.host;
    if (host === undefined) continue;
    let group = groups.get(host);
    if (!group) groups.set(host, (group = []));
    group.push(index);
  }
  return groups;
}

function meanAndCv(values: readonly number[]): { mean: number; max: number; cv: number } {
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  const variance = values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / values.length;
  return { mean, max: Math.max(...values), cv: mean > 0 ? Math.sqrt(variance) / mean : 0 };
}

function describeNode(
  host: string,
  indices: readonly number[],
  records: readonly RequestRecord[],
  columns: Record<DerivedColumnName, Float64Array>,
  knownHostTotal: number,
  window: { start: number; end: number } | null,
): NodeSummary {
  let succeeded = 0;
  let promptTokens = 0;
  let cachedTokens = 0;
  const nodeRecords: RequestRecord[] = new Array(indices.length);
  for (let position = 0; position < indices.length; position++) {
    const record = records[indices[position] as number] as RequestRecord;
    nodeRecords[position] = record;
    if (!record.success) continue;
    succeeded++;
    if (record.actualPromptTokens === undefined) continue;
    promptTokens += record.actualPromptTokens;
    cachedTokens += record.cachedTokens ?? 0;
  }
  // The columns hold NaN for failed requests, so these are statistics over the node's succeeded requests.
  const statisticsOf = (values: Float64Array) => {
    const picked = new Float64Array(indices.length);
    for (let position = 0; position < indices.length; position++) picked[position] = values[indices[position] as number] as number;
    return computeStatistics(picked);
  };
  let peakInFlight = 0;
  let meanInFlight = 0;
  if (window) {
    const sweep = sweepIntervals(collectIntervals(nodeRecords, nodeInFlightStart, nodeInFlightEnd), window.start, window.end);
    peakInFlight = sweep.peak;
    meanInFlight = sweep.integral / (window.end - window.start);
  }
  return {
    host,
    requests: indices.length,
    succeeded,
    failed: indices.length - succeeded,
    share: knownHostTotal > 0 ? indices.length / knownHostTotal : 0,
    cacheHitRatio: promptTokens > 0 ? cachedTokens / promptTokens : null,
    ttft: statisticsOf(columns.ttft),
    totalLatency: statisticsOf(columns.total_latency),
    queueTimeInServer: statisticsOf(columns.queue_time_in_server),
    pureQueueTime: statisticsOf(columns.pure_queue_time),
    peakInFlight,
    meanInFlight,
  };
}

/** For shared-prefix workloads: how consistently each prefix group went to one node. */
function prefixGroupAffinity(records: readonly RequestRecord[]): RoutingSummary['prefixGroupAffinity'] {
  const hostsPerGroup = new Map<number, Map<string, number>>();
  for (const record of records) {
    if (record.prefixGroup === undefined || record.host === undefined) continue;
    let hosts = hostsPerGroup.get(record.prefixGroup);
    if (!hosts) hostsPerGroup.set(record.prefixGroup, (hosts = new Map()));
    hosts.set(record.host, (hosts.get(record.host) ?? 0) + 1);
  }
  if (hostsPerGroup.size === 0) return null;
  const shares = [...hostsPerGroup.values()].map((hosts) => {
    const counts = [...hosts.values()];
    return Math.max(...counts) / counts.reduce((sum, count) => sum + count, 0);
  });
  return {
    meanShareOnTopNode: shares.reduce((sum, share) => sum + share, 0) / shares.length,
    minShareOnTopNode: Math.min(...shares),
    groups: shares.length,
  };
}

/**
 * Per-node view: for routing tests, or whenever the records name more than one host. Hosts are sorted by name so that
 * runs line up in comparisons. Requests whose host is unknown (refused before any tap saw them) count in no node.
 */
export function summarizeRouting(
  testLevel: TestLevel,
  records: readonly RequestRecord[],
  succeededColumns?: Record<DerivedColumnName, Float64Array>,
): RoutingSummary | undefined {
  const groups = groupByHost(records);
  if (groups.size === 0 || (testLevel !== 'routing' && groups.size < 2)) return undefined;
  const knownHostTotal = [...groups.values()].reduce((sum, group) => sum + group.length, 0);
  const window = analysisWindow(records);
  const columns = succeededColumns ?? succeededOnly(records, deriveColumnArrays(records));
  const nodes = [...groups.keys()]
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
    .map((host) => describeNode(host, groups.get(host) as number[], records, columns, knownHostTotal, window));
  const balance = meanAndCv(nodes.map((node) => node.requests));
  return {
    nodes,
    imbalanceMaxOverMean: balance.mean > 0 ? balance.max / balance.mean : 0,
    imbalanceCv: balance.cv,
    prefixGroupAffinity: prefixGroupAffinity(records),
  };
}
