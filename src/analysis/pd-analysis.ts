import type { RequestRecord } from '../types/record.js';
import type { PdNodeRow, PdPairBalance, PdPairRow, PdPhaseBreakdownRow, PdPhaseColumn, PdSummary, PdTransferBin } from '../types/summary.js';
import { deriveColumns } from './derive.js';
import { coefficientOfVariation, computeStatistics, percentileOfSorted } from './statistics.js';

/** The phase columns and the record fields that hold them, in the order of a request's life. */
export const PD_PHASES: readonly { column: PdPhaseColumn; field: 'prefillQueueTime' | 'prefillForwardTime' | 'kvTransferTime' | 'decodeQueueTime' }[] = [
  { column: 'prefill_queue_time', field: 'prefillQueueTime' },
  { column: 'prefill_forward_time', field: 'prefillForwardTime' },
  { column: 'kv_transfer_time', field: 'kvTransferTime' },
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
  const prefillHosts = orderedHosts(pdRecords.map((record) => record.prefillHost as string));
  const decodeHosts = orderedHosts(pdRecords.map((record) => record.decodeHost as string));
  const summary: PdSummary = {
    prefillNodes: prefillHosts.map((host) => prefillNodeRow(host, pdRecords)),
    decodeNodes: decodeHosts.map((host) => decodeNodeRow(host, pdRecords)),
    ...pairsOf(pdRecords, prefillHosts, decodeHosts),
  };
  const breakdown = phasesByTtftPercentile(pdRecords);
  if (breakdown !== undefined) summary.phasesByTtftPercentile = breakdown;
  const transfers = kvTransferOverTime(pdRecords, t0);
  if (transfers !== undefined) summary.kvTransferOverTime = transfers;
  return summary;
}

/** Hosts in a stable order: by URL, so that tables and charts list them the same way each time. */
function orderedHosts(hosts: readonly string[]): string[] {
  return [...new Set(hosts)].sort((first, second) => first.localeCompare(second, 'en', { numeric: true }));
}

function phaseStatistics(records: readonly RequestRecord[], field: (typeof PD_PHASES)[number]['field']) {
  const values = records.filter((record) => record.success).map((record) => record[field]).filter((value): value is number => value !== undefined && Number.isFinite(value));
  return computeStatistics(values);
}

function prefillNodeRow(host: string, records: readonly RequestRecord[]): PdNodeRow {
  const taken = records.filter((record) => record.prefillHost === host);
  return {
    host,
    requests: taken.length,
    failed: taken.filter((record) => !record.success).length,
    share: taken.length / records.length,
    prefillQueueTimeSeconds: phaseStatistics(taken, 'prefillQueueTime'),
    prefillForwardTimeSeconds: phaseStatistics(taken, 'prefillForwardTime'),
    kvTransferTimeSeconds: phaseStatistics(taken, 'kvTransferTime'),
  };
}

function decodeNodeRow(host: string, records: readonly RequestRecord[]): PdNodeRow {
  const taken = records.filter((record) => record.decodeHost === host);
  const derived = taken.filter((record) => record.success).map((record) => deriveColumns(record));
  const column = (name: 'ttft' | 'tpot') => computeStatistics(derived.map((columns) => columns[name]).filter((value): value is number => value !== undefined && Number.isFinite(value)));
  return {
    host,
    requests: taken.length,
    failed: taken.filter((record) => !record.success).length,
    share: taken.length / records.length,
    decodeQueueTimeSeconds: phaseStatistics(taken, 'decodeQueueTime'),
    ttftSeconds: column('ttft'),
    tpotSeconds: column('tpot'),
  };
}

/** Requests per (prefill, decode) pair, every possible pair listed (an unused one with 0), and how evenly they spread. */
function pairsOf(records: readonly RequestRecord[], prefillHosts: readonly string[], decodeHosts: readonly string[]): { pairs: PdPairRow[]; pairBalance: PdPairBalance } {
  const counts = new Map<string, number>();
  for (const record of records) {
    const key = `${record.prefillHost as string}\n${record.decodeHost as string}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const pairs: PdPairRow[] = [];
  for (const prefillHost of prefillHosts) {
    for (const decodeHost of decodeHosts) {
      const requests = counts.get(`${prefillHost}\n${decodeHost}`) ?? 0;
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
export function phasesByTtftPercentile(records: readonly RequestRecord[]): PdPhaseBreakdownRow[] | undefined {
  const complete: { ttft: number; record: RequestRecord }[] = [];
  for (const record of records) {
    if (!record.success || PD_PHASES.some(({ field }) => record[field] === undefined)) continue;
    const ttft = deriveColumns(record).ttft;
    if (ttft !== undefined && Number.isFinite(ttft)) complete.push({ ttft, record });
  }
  if (complete.length === 0) return undefined;
  complete.sort((first, second) => first.ttft - second.ttft);
  const sortedTtft = Float64Array.from(complete, (entry) => entry.ttft);
  const count = complete.length;
  return PD_BREAKDOWN_PERCENTILES.map((percentile) => {
    const halfWidth = Math.min(2.5, (100 - percentile) / 2);
    const fromPercentile = percentile - halfWidth;
    const toPercentile = percentile + halfWidth;
    const at = Math.round((percentile / 100) * (count - 1));
    let first = Math.max(0, Math.ceil((fromPercentile / 100) * (count - 1)));
    let last = Math.min(count - 1, Math.floor((toPercentile / 100) * (count - 1)));
    if (first > at) first = at;
    if (last < at) last = at;
    const band = complete.slice(first, last + 1);
    const mean = (value: (entry: (typeof complete)[number]) => number): number => band.reduce((sum, entry) => sum + value(entry), 0) / band.length;
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
  const start = Math.floor(Math.min(...arrivals));
  const end = Math.max(...arrivals);
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
