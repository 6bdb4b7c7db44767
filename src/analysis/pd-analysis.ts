import type { RequestRecord } from '../types/record.js';
import type { PdNodeRow, PdPairBalance, PdPairRow, PdPhaseBreakdownRow, PdPhaseColumn, PdStageColumn, PdSummary, PdTransferBin } from '../types/summary.js';
import { DERIVED_COLUMNS } from './derive.js';
import { coefficientOfVariation, computeStatistics, percentileOfSorted } from './statistics.js';

/** The phase columns and the record fields that hold them, in the order of a request's life. */
export const PD_PHASES: readonly { column: PdPhaseColumn; field: 'prefillQueueTime' | 'prefillForwardTime' | 'kvTransferTime' | 'decodeQueueTime' }[] = [
  { column: 'prefill_queue_time', field: 'prefillQueueTime' },
  { column: 'prefill_forward_time', field: 'prefillForwardTime' },
  { column: 'kv_transfer_time', field: 'kvTransferTime' },
  { column: 'decode_queue_time', field: 'decodeQueueTime' },
];

/** The stage columns of the latency tables in a PD run and their record fields: the phases and the decode server's wait. */
export const PD_STAGES: readonly { column: PdStageColumn; field: (typeof PD_PHASES)[number]['field'] | 'kvTransferWaitTime' }[] = [
  { column: 'prefill_queue_time', field: 'prefillQueueTime' },
  { column: 'prefill_forward_time', field: 'prefillForwardTime' },
  { column: 'kv_transfer_time', field: 'kvTransferTime' },
  { column: 'kv_transfer_wait_time', field: 'kvTransferWaitTime' },
  { column: 'decode_queue_time', field: 'decodeQueueTime' },
];

/** The TTFT percentiles the phase breakdown reads. */
export const PD_BREAKDOWN_PERCENTILES: readonly number[] = [50, 90, 99];

/** How many time bins the KV transfer timeline aims for (whole seconds each, at least one second). */
const TRANSFER_BINS = 20;

/**
 * A PD run's analysis (issue 25 item 4), from the records alone: the per-role node tables, the balance of pairs, which
 * phase dominates TTFT at p50/p90/p99, and KV transfers over time. Undefined when no record names both its prefill and
 * its decode server (not a PD run). Phase parts are left out, not zeroed, while the phase columns are empty.
 */
export function summarizePd(records: readonly RequestRecord[], t0: number): PdSummary | undefined {
  const pdRecords = records.filter((record) => !record.warmup && record.prefillHost !== undefined && record.decodeHost !== undefined);
  if (pdRecords.length === 0) return undefined;
  const derived: DerivedPair = { ttft: derivedColumn(pdRecords, 'ttft'), tpot: derivedColumn(pdRecords, 'tpot') };
  const byPrefill = groupBy(pdRecords, (record) => record.prefillHost as string);
  const byDecode = groupBy(pdRecords, (record) => record.decodeHost as string);
  const prefillHosts = orderedHosts(byPrefill.keys());
  const decodeHosts = orderedHosts(byDecode.keys());
  const summary: PdSummary = {
    prefillNodes: prefillHosts.map((host) => prefillNodeRow(host, byPrefill.get(host) ?? [], pdRecords)),
    decodeNodes: decodeHosts.map((host) => decodeNodeRow(host, byDecode.get(host) ?? [], pdRecords, derived)),
    ...pairsOf(pdRecords, byPrefill, prefillHosts, decodeHosts),
    stages: stageStatistics(pdRecords),
  };
  const breakdown = phasesByTtftPercentile(pdRecords, derived.ttft);
  if (breakdown !== undefined) summary.phasesByTtftPercentile = breakdown;
  const transfers = kvTransferOverTime(pdRecords, t0);
  if (transfers !== undefined) summary.kvTransferOverTime = transfers;
  return summary;
}

/** Hosts in a stable order: by URL, so that tables and charts list them the same way each time. */
function orderedHosts(hosts: Iterable<string>): string[] {
  return [...hosts].sort((first, second) => first.localeCompare(second, 'en', { numeric: true }));
}

/** Each PD stage's statistics over all the PD records (the latency tables' rows for a PD run). */
function stageStatistics(records: readonly RequestRecord[]): Record<PdStageColumn, ReturnType<typeof computeStatistics>> {
  const all = Array.from(records, (_, index) => index);
  const stages = {} as Record<PdStageColumn, ReturnType<typeof computeStatistics>>;
  for (const { column, field } of PD_STAGES) stages[column] = phaseStatistics(all, records, field);
  return stages;
}

/** Statistics of one phase column over the succeeded records at `indices` (a missing value counts for nothing). */
function phaseStatistics(indices: readonly number[], records: readonly RequestRecord[], field: (typeof PD_STAGES)[number]['field']) {
  const values = new Float64Array(indices.length);
  let count = 0;
  for (const index of indices) {
    const record = records[index] as RequestRecord;
    const value = record[field];
    if (record.success && value !== undefined && Number.isFinite(value)) values[count++] = value;
  }
  return computeStatistics(values.subarray(0, count));
}

function failedAt(indices: readonly number[], records: readonly RequestRecord[]): number {
  let failed = 0;
  for (const index of indices) if (!(records[index] as RequestRecord).success) failed++;
  return failed;
}

/** Record indices by a key, one pass (a run may have many servers and a million records). */
function groupBy(records: readonly RequestRecord[], key: (record: RequestRecord) => string): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  records.forEach((record, index) => {
    const name = key(record);
    const group = groups.get(name);
    if (group === undefined) groups.set(name, [index]);
    else group.push(index);
  });
  return groups;
}

/**
 * One derived column as the rest of servelab defines it (derive.ts's DERIVED_COLUMNS), by record index, NaN where
 * missing: two columns, not deriveColumnArrays' fourteen (112 MB for a million records).
 */
function derivedColumn(records: readonly RequestRecord[], name: 'ttft' | 'tpot'): Float64Array {
  const compute = DERIVED_COLUMNS.find((column) => column.name === name)?.compute;
  return Float64Array.from(records, (record) => compute?.(record) ?? Number.NaN);
}

/** The derived TTFT and TPOT of the PD records, by record index. */
interface DerivedPair {
  ttft: Float64Array;
  tpot: Float64Array;
}

/** What every PD node row has: its requests, how many failed and its share of the run's. */
function nodeRowBase(host: string, indices: readonly number[], records: readonly RequestRecord[]): PdNodeRow {
  return { host, requests: indices.length, failed: failedAt(indices, records), share: indices.length / records.length };
}

function prefillNodeRow(host: string, indices: readonly number[], records: readonly RequestRecord[]): PdNodeRow {
  return {
    ...nodeRowBase(host, indices, records),
    prefillQueueTimeSeconds: phaseStatistics(indices, records, 'prefillQueueTime'),
    prefillForwardTimeSeconds: phaseStatistics(indices, records, 'prefillForwardTime'),
    kvTransferTimeSeconds: phaseStatistics(indices, records, 'kvTransferTime'),
  };
}

function decodeNodeRow(host: string, indices: readonly number[], records: readonly RequestRecord[], derived: DerivedPair): PdNodeRow {
  const succeeded = indices.filter((index) => (records[index] as RequestRecord).success);
  // computeStatistics keeps the finite values: a missing TTFT or TPOT (NaN) counts for nothing.
  const column = (values: Float64Array) => computeStatistics(Float64Array.from(succeeded, (index) => values[index] as number));
  return {
    ...nodeRowBase(host, indices, records),
    decodeQueueTimeSeconds: phaseStatistics(indices, records, 'decodeQueueTime'),
    ttftSeconds: column(derived.ttft),
    tpotSeconds: column(derived.tpot),
  };
}

/** Requests per (prefill, decode) pair, every possible pair listed (an unused one with 0), and how evenly they spread. */
function pairsOf(records: readonly RequestRecord[], byPrefill: ReadonlyMap<string, readonly number[]>, prefillHosts: readonly string[], decodeHosts: readonly string[]): { pairs: PdPairRow[]; pairBalance: PdPairBalance } {
  const pairs: PdPairRow[] = [];
  for (const prefillHost of prefillHosts) {
    // Counted per prefill server, by decode server: no key built per request.
    const counts = new Map<string, number>();
    for (const index of byPrefill.get(prefillHost) ?? []) {
      const decodeHost = (records[index] as RequestRecord).decodeHost as string;
      counts.set(decodeHost, (counts.get(decodeHost) ?? 0) + 1);
    }
    for (const decodeHost of decodeHosts) {
      const requests = counts.get(decodeHost) ?? 0;
      pairs.push({ prefillHost, decodeHost, requests, share: requests / records.length });
    }
  }
  const perPair = pairs.map((pair) => pair.requests);
  const mean = records.length / pairs.length;
  return {
    pairs,
    pairBalance: {
      pairsPossible: pairs.length,
      pairsUsed: perPair.filter((count) => count > 0).length,
      maxOverMean: Math.max(...perPair) / mean,
      coefficientOfVariation: coefficientOfVariation(perPair),
    },
  };
}

/**
 * Which phase dominates TTFT around each percentile. The requests with every phase and a TTFT are ranked by TTFT; at
 * percentile p the band is the ranks within ±2.5 percentiles (narrowed to stay below 100 at p99: ±0.5), at least the
 * one request at p; each phase's mean over the band, and the rest of the band's mean TTFT that no phase covers.
 */
export function phasesByTtftPercentile(records: readonly RequestRecord[], ttfts: Float64Array = derivedColumn(records, 'ttft')): PdPhaseBreakdownRow[] | undefined {
  // Indices of the requests with every phase and a TTFT, ranked by TTFT (typed arrays: a million objects would not be).
  const kept = new Uint32Array(records.length);
  let count = 0;
  records.forEach((record, index) => {
    if (!record.success || !Number.isFinite(ttfts[index] as number)) return;
    if (record.prefillQueueTime === undefined || record.prefillForwardTime === undefined || record.kvTransferTime === undefined || record.decodeQueueTime === undefined) return;
    kept[count++] = index;
  });
  if (count === 0) return undefined;
  const ranked = kept.subarray(0, count).sort((first, second) => (ttfts[first] as number) - (ttfts[second] as number));
  const sortedTtft = Float64Array.from(ranked, (index) => ttfts[index] as number);
  const complete = { at: (rank: number) => ({ ttft: sortedTtft[rank] as number, record: records[ranked[rank] as number] as RequestRecord }) };
  return PD_BREAKDOWN_PERCENTILES.map((percentile) => {
    const halfWidth = Math.min(2.5, (100 - percentile) / 2);
    const fromPercentile = percentile - halfWidth;
    const toPercentile = percentile + halfWidth;
    const at = Math.round((percentile / 100) * (count - 1));
    let first = Math.max(0, Math.ceil((fromPercentile / 100) * (count - 1)));
    let last = Math.min(count - 1, Math.floor((toPercentile / 100) * (count - 1)));
    if (first > at) first = at;
    if (last < at) last = at;
    const band = Array.from({ length: last - first + 1 }, (_, offset) => complete.at(first + offset));
    const mean = (value: (entry: (typeof band)[number]) => number): number => band.reduce((sum, entry) => sum + value(entry), 0) / band.length;
    const meanTtft = mean((entry) => entry.ttft);
    const meanSeconds = {} as PdPhaseBreakdownRow['meanSeconds'];
    let phaseSum = 0;
    for (const { column, field } of PD_PHASES) {
      meanSeconds[column] = mean((entry) => entry.record[field] as number);
      phaseSum += meanSeconds[column];
    }
    meanSeconds.rest_of_ttft = meanTtft - phaseSum;
    const parts = [...PD_PHASES.map(({ column }) => column), 'rest_of_ttft'] as const;
    const dominant = parts.reduce((best, part) => (meanSeconds[part] > meanSeconds[best] ? part : best), parts[0]);
    return {
      percentile,
      ttftSeconds: percentileOfSorted(sortedTtft, percentile),
      requests: band.length,
      fromPercentile,
      toPercentile,
      meanSeconds,
      dominant,
      dominantShare: meanTtft > 0 ? meanSeconds[dominant] / meanTtft : 0,
    };
  });
}

/**
 * KV transfer latency and volume over the run, binned by arrival (whole seconds per bin, about 20 bins): the transfer
 * follows its request's prefill by at most a queue and a forward, short against a bin in any run long enough to chart.
 */
export function kvTransferOverTime(records: readonly RequestRecord[], t0: number): PdTransferBin[] | undefined {
  const transfers = records.filter((record) => record.success && record.kvTransferTime !== undefined && record.arrivalTime !== undefined);
  if (transfers.length === 0) return undefined;
  const arrivals = transfers.map((record) => (record.arrivalTime as number) - t0);
  // A loop, not Math.min(...arrivals): spreading a million arguments overflows the call stack.
  let first = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  for (const arrival of arrivals) {
    if (arrival < first) first = arrival;
    if (arrival > end) end = arrival;
  }
  const start = Math.floor(first);
  const widthSeconds = Math.max(1, Math.ceil((end - start) / TRANSFER_BINS));
  const binCount = Math.floor((end - start) / widthSeconds) + 1;
  const bins: { times: number[]; tokens: number }[] = Array.from({ length: binCount }, () => ({ times: [], tokens: 0 }));
  transfers.forEach((record, index) => {
    const bin = bins[Math.floor(((arrivals[index] as number) - start) / widthSeconds)] as { times: number[]; tokens: number };
    bin.times.push(record.kvTransferTime as number);
    bin.tokens += record.actualPromptTokens ?? record.inputLength;
  });
  return bins.map((bin, index) => ({
    startSinceT0Seconds: start + index * widthSeconds,
    endSinceT0Seconds: start + (index + 1) * widthSeconds,
    requests: bin.times.length,
    kvTransferTimeSeconds: computeStatistics(bin.times),
    transferredTokensPerSecond: bin.tokens / widthSeconds,
  }));
}
