import { nodeIndexOf } from './node-index.js';
import type { RequestRecord } from '../types/record.js';
import type { TestLevel } from '../types/run.js';
import type { DerivedColumnName, NodeSummary, RoutingSummary, Statistics } from '../types/summary.js';
import { deriveColumnArrays } from './derive.js';
import { takeFloat64, type Float64Arena } from './float-arena.js';
import { statisticsInPlace } from './statistics.js';
import { analysisWindow, sweepIntervals } from './timeseries.js';

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

/** The machine a node's server ran on by name, where the run placed servers on named machines (Slurm nodes). */
function placedOn(index: number | null, nodeNames: readonly (string | null)[] | undefined): { placedOn?: string } {
  const name = index === null ? undefined : nodeNames?.[index];
  return name === undefined || name === null ? {} : { placedOn: name };
}

function meanAndCv(values: readonly number[]): { mean: number; max: number; cv: number } {
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  const variance = values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / values.length;
  return { mean, max: Math.max(...values), cv: mean > 0 ? Math.sqrt(variance) / mean : 0 };
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
 * Built from one pass that groups record indices by host (a counting sort), so a million records cost a few passes.
 */
export function summarizeRouting(
  testLevel: TestLevel,
  records: readonly RequestRecord[],
  succeededColumns?: Record<DerivedColumnName, Float64Array>,
  arena?: Float64Arena,
  nodeUrls?: readonly string[],
  nodeNames?: readonly (string | null)[],
): RoutingSummary | undefined {
  const hostIds = new Map<string, number>();
  const hostOfRecord = (arena ? arena.takeInt32(records.length) : new Int32Array(records.length)).fill(-1);
  const requestCounts: number[] = [];
  for (let index = 0; index < records.length; index++) {
    const host = records[index]?.host;
    if (host === undefined) continue;
    let id = hostIds.get(host);
    if (id === undefined) {
      id = hostIds.size;
      hostIds.set(host, id);
      requestCounts.push(0);
    }
    hostOfRecord[index] = id;
    requestCounts[id]!++;
  }
  const hostCount = hostIds.size;
  if (hostCount === 0 || (testLevel !== 'routing' && hostCount < 2)) return undefined;

  // Counting sort of record indices by host: host h owns order[offsets[h] .. offsets[h] + requestCounts[h]).
  const offsets = new Int32Array(hostCount + 1);
  for (let id = 0; id < hostCount; id++) offsets[id + 1] = (offsets[id] as number) + (requestCounts[id] as number);
  const knownHostTotal = offsets[hostCount] as number;
  const order = arena ? arena.takeInt32(knownHostTotal) : new Int32Array(knownHostTotal);
  const cursor = offsets.slice(0, hostCount);
  const succeeded = new Array<number>(hostCount).fill(0);
  const promptTokens = new Array<number>(hostCount).fill(0);
  const cachedTokens = new Array<number>(hostCount).fill(0);
  for (let index = 0; index < records.length; index++) {
    const id = hostOfRecord[index] as number;
    if (id < 0) continue;
    order[cursor[id]!++] = index;
    const record = records[index] as RequestRecord;
    if (!record.success) continue;
    succeeded[id]!++;
    if (record.actualPromptTokens === undefined) continue;
    promptTokens[id]! += record.actualPromptTokens;
    cachedTokens[id]! += record.cachedTokens ?? 0;
  }

  const columns = succeededColumns ?? succeededOnly(records, deriveColumnArrays(records));
  const buffer = takeFloat64(arena, knownHostTotal);
  // Statistics of one column per host, over its succeeded requests (failed ones are NaN in the columns).
  const perHostStatistics = (values: Float64Array): (Statistics | null)[] =>
    Array.from({ length: hostCount }, (_, id) => {
      const from = offsets[id] as number;
      let count = 0;
      for (let position = from; position < (offsets[id + 1] as number); position++) {
        const value = values[order[position] as number] as number;
        if (value === value) buffer[from + count++] = value;
      }
      return statisticsInPlace(buffer.subarray(from, from + count));
    });
  const ttft = perHostStatistics(columns.ttft);
  const totalLatency = perHostStatistics(columns.total_latency);
  const queueTimeInServer = perHostStatistics(columns.queue_time_in_server);
  const pureQueueTime = perHostStatistics(columns.pure_queue_time);

  const window = analysisWindow(records);
  const inFlight = Array.from({ length: hostCount }, () => ({ peak: 0, mean: 0 }));
  if (window) {
    const starts = takeFloat64(arena, knownHostTotal);
    const ends = takeFloat64(arena, knownHostTotal);
    for (let id = 0; id < hostCount; id++) {
      const from = offsets[id] as number;
      let count = 0;
      for (let position = from; position < (offsets[id + 1] as number); position++) {
        const record = records[order[position] as number] as RequestRecord;
        const start = record.routerSendTime ?? record.arrivalTime;
        const end = record.finishTime;
        if (start === undefined || end === undefined || end < start) continue;
        starts[from + count] = start;
        ends[from + count] = end;
        count++;
      }
      const sweep = sweepIntervals({ starts: starts.subarray(from, from + count), ends: ends.subarray(from, from + count) }, window.start, window.end);
      inFlight[id] = { peak: sweep.peak, mean: sweep.integral / (window.end - window.start) };
    }
  }

  const nodes: NodeSummary[] = [...hostIds.entries()]
    .sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))
    .map(([host, id]) => ({
      node: nodeIndexOf(host, nodeUrls),
      host,
      ...placedOn(nodeIndexOf(host, nodeUrls), nodeNames),
      requests: requestCounts[id] as number,
      succeeded: succeeded[id] as number,
      failed: (requestCounts[id] as number) - (succeeded[id] as number),
      share: (requestCounts[id] as number) / knownHostTotal,
      cacheHitRatio: (promptTokens[id] as number) > 0 ? (cachedTokens[id] as number) / (promptTokens[id] as number) : null,
      ttft: ttft[id] ?? null,
      totalLatency: totalLatency[id] ?? null,
      queueTimeInServer: queueTimeInServer[id] ?? null,
      pureQueueTime: pureQueueTime[id] ?? null,
      peakInFlight: inFlight[id]?.peak ?? 0,
      meanInFlight: inFlight[id]?.mean ?? 0,
    }));
  const balance = meanAndCv(nodes.map((node) => node.requests));
  return {
    nodes,
    imbalanceMaxOverMean: balance.mean > 0 ? balance.max / balance.mean : 0,
    imbalanceCv: balance.cv,
    prefixGroupAffinity: prefixGroupAffinity(records),
  };
}
