import type { RequestRecord } from '../types/record.js';
import type { TestLevel } from '../types/run.js';
import type { NodeSummary, RoutingSummary } from '../types/summary.js';
import { deriveColumns } from './derive.js';
import { computeStatistics } from './statistics.js';
import { analysisWindow, collectIntervals, sweepIntervals } from './timeseries.js';

/** In flight on a node: from the router's send (the arrival in a node test) to the finish. */
export const nodeInFlightStart = (record: RequestRecord): number | undefined => record.routerSendTime ?? record.arrivalTime;
export const nodeInFlightEnd = (record: RequestRecord): number | undefined => record.finishTime;

export function groupByHost(records: readonly RequestRecord[]): Map<string, RequestRecord[]> {
  const groups = new Map<string, RequestRecord[]>();
  for (const record of records) {
    if (record.host === undefined) continue;
    let group = groups.get(record.host);
    if (!group) groups.set(record.host, (group = []));
    group.push(record);
  }
  return groups;
}

function meanAndCv(values: readonly number[]): { mean: number; max: number; cv: number } {
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  const variance = values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / values.length;
  return { mean, max: Math.max(...values), cv: mean > 0 ? Math.sqrt(variance) / mean : 0 };
}

function describeNode(host: string, records: readonly RequestRecord[], knownHostTotal: number, window: { start: number; end: number } | null): NodeSummary {
  const succeededRecords = records.filter((record) => record.success);
  const derived = succeededRecords.map(deriveColumns);
  const statisticsOf = (pick: (index: number) => number | undefined) =>
    computeStatistics(derived.map((_, index) => pick(index) ?? Number.NaN));
  let promptTokens = 0;
  let cachedTokens = 0;
  for (const record of succeededRecords) {
    if (record.actualPromptTokens === undefined) continue;
    promptTokens += record.actualPromptTokens;
    cachedTokens += record.cachedTokens ?? 0;
  }
  let peakInFlight = 0;
  let meanInFlight = 0;
  if (window) {
    const sweep = sweepIntervals(collectIntervals(records, nodeInFlightStart, nodeInFlightEnd), window.start, window.end);
    peakInFlight = sweep.peak;
    meanInFlight = sweep.integral / (window.end - window.start);
  }
  return {
    host,
    requests: records.length,
    succeeded: succeededRecords.length,
    failed: records.length - succeededRecords.length,
    share: knownHostTotal > 0 ? records.length / knownHostTotal : 0,
    cacheHitRatio: promptTokens > 0 ? cachedTokens / promptTokens : null,
    ttft: statisticsOf((index) => derived[index]?.ttft),
    totalLatency: statisticsOf((index) => derived[index]?.total_latency),
    queueTimeInServer: statisticsOf((index) => derived[index]?.queue_time_in_server),
    pureQueueTime: statisticsOf((index) => derived[index]?.pure_queue_time),
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
export function summarizeRouting(testLevel: TestLevel, records: readonly RequestRecord[]): RoutingSummary | undefined {
  const groups = groupByHost(records);
  if (groups.size === 0 || (testLevel !== 'routing' && groups.size < 2)) return undefined;
  const knownHostTotal = [...groups.values()].reduce((sum, group) => sum + group.length, 0);
  const window = analysisWindow(records);
  const nodes = [...groups.keys()]
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
    .map((host) => describeNode(host, groups.get(host) as RequestRecord[], knownHostTotal, window));
  const balance = meanAndCv(nodes.map((node) => node.requests));
  return {
    nodes,
    imbalanceMaxOverMean: balance.mean > 0 ? balance.max / balance.mean : 0,
    imbalanceCv: balance.cv,
    prefixGroupAffinity: prefixGroupAffinity(records),
  };
}
