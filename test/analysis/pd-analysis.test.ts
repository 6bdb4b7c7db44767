import { describe, expect, it } from 'vitest';
import { summarizePd } from '../../src/analysis/pd-analysis.js';
import type { RequestRecord } from '../../src/types/record.js';
import { recordAt, T0 } from './records.js';

const P0 = 'http://127.0.0.1:30001';
const P1 = 'http://127.0.0.1:30002';
const D0 = 'http://127.0.0.1:30003';
const D1 = 'http://127.0.0.1:30004';

/** A PD request arriving at `arrival` s, its TTFT `ttft` s, its phases as given (seconds), 11 output tokens over 0.2 s. */
function pdRecord(arrival: number, ttft: number, hosts: { prefill: string; decode: string }, phases: Partial<RequestRecord> = {}): RequestRecord {
  return recordAt({
    arrivalTime: arrival,
    firstTokenTime: arrival + ttft,
    finishTime: arrival + ttft + 0.2,
    actualOutputTokens: 11,
    actualPromptTokens: 1000,
    host: hosts.decode,
    prefillHost: hosts.prefill,
    decodeHost: hosts.decode,
    ...phases,
  });
}

describe('PD analysis', () => {
  it('is absent for a co-located run', () => {
    expect(summarizePd([recordAt({ arrivalTime: 0, firstTokenTime: 0.1, host: D0 })], T0)).toBeUndefined();
  });

  it('tables each role, counts every possible pair, and says nothing of phases while their columns are empty', () => {
    const records = [
      pdRecord(0, 0.1, { prefill: P0, decode: D0 }),
      pdRecord(1, 0.1, { prefill: P0, decode: D0 }),
      pdRecord(2, 0.1, { prefill: P0, decode: D1 }),
      pdRecord(3, 0.1, { prefill: P1, decode: D0 }),
      { ...pdRecord(4, 0.1, { prefill: P0, decode: D0 }), success: false, error: 'http_5xx' } as RequestRecord,
    ];
    const pd = summarizePd(records, T0);
    expect(pd?.prefillNodes.map((node) => [node.host, node.requests, node.failed])).toEqual([[P0, 4, 1], [P1, 1, 0]]);
    expect(pd?.decodeNodes.map((node) => [node.host, node.requests])).toEqual([[D0, 4], [D1, 1]]);
    // Empty columns stay null (nothing measured), never zeros.
    expect(pd?.prefillNodes[0]?.kvTransferTimeSeconds).toBeNull();
    expect(pd?.decodeNodes[0]?.decodeQueueTimeSeconds).toBeNull();
    expect(pd?.decodeNodes[0]?.ttftSeconds?.p50).toBeCloseTo(0.1, 6);
    expect(pd?.decodeNodes[0]?.tpotSeconds?.p50).toBeCloseTo(0.02, 6);
    expect(pd?.pairs.map((pair) => pair.requests)).toEqual([3, 1, 1, 0]);
    expect(pd?.pairBalance).toMatchObject({ pairsPossible: 4, pairsUsed: 3 });
    // The busiest pair took 3 of 5 requests, against a mean of 1.25 a pair.
    expect(pd?.pairBalance.maxOverMean).toBeCloseTo(2.4, 6);
    expect(pd?.phasesByTtftPercentile).toBeUndefined();
    expect(pd?.kvTransferOverTime).toBeUndefined();
  });

  it('names the phase that dominates TTFT at p50, p90 and p99', () => {
    // 100 requests: TTFT = 0.1 + 0.01 i. Forward 0.06, transfer 0.01, decode queue 0.005 throughout; the prefill queue
    // (0.01 i) grows with TTFT and overtakes the forward from i = 7 on; the rest of TTFT is 0.025 throughout.
    const records = Array.from({ length: 100 }, (_, index) =>
      pdRecord(index * 0.1, 0.1 + 0.01 * index, { prefill: P0, decode: D0 }, { prefillQueueTime: 0.01 * index, prefillForwardTime: 0.06, kvTransferTime: 0.01, decodeQueueTime: 0.005 }),
    );
    const rows = summarizePd(records, T0)?.phasesByTtftPercentile;
    expect(rows?.map((row) => row.percentile)).toEqual([50, 90, 99]);
    const p50 = rows?.[0];
    // Ranks within 47.5..52.5 percentiles of 99 gaps: i = 48..51.
    expect(p50?.requests).toBe(4);
    expect(p50?.meanSeconds.prefill_queue_time).toBeCloseTo(0.495, 6);
    expect(p50?.dominant).toBe('prefill_queue_time');
    expect(p50?.meanSeconds.rest_of_ttft).toBeCloseTo(0.1 - 0.06 - 0.01 - 0.005, 6);
    expect(rows?.[2]?.dominant).toBe('prefill_queue_time');
    expect(rows?.[2]?.ttftSeconds).toBeCloseTo(0.1 + 0.01 * 98.01, 6);

    // Early in the ranking, the forward dominates: only the five fastest requests.
    const fast = summarizePd(records.slice(0, 5), T0)?.phasesByTtftPercentile;
    expect(fast?.[0]?.dominant).toBe('prefill_forward_time');
    expect(fast?.[0]?.dominantShare).toBeCloseTo(0.06 / 0.12, 6);
  });

  it('charts KV transfers over time from the records that have them', () => {
    const records = [
      pdRecord(0.2, 0.1, { prefill: P0, decode: D0 }, { kvTransferTime: 0.01 }),
      pdRecord(0.7, 0.1, { prefill: P0, decode: D0 }, { kvTransferTime: 0.03 }),
      pdRecord(2.5, 0.1, { prefill: P0, decode: D0 }, { kvTransferTime: 0.05 }),
      pdRecord(3.0, 0.1, { prefill: P0, decode: D0 }),
    ];
    const bins = summarizePd(records, T0)?.kvTransferOverTime;
    expect(bins?.map((bin) => [bin.startSinceT0Seconds, bin.requests])).toEqual([[0, 2], [1, 0], [2, 1]]);
    expect(bins?.[0]?.kvTransferTimeSeconds?.max).toBeCloseTo(0.03, 6);
    expect(bins?.[0]?.transferredTokensPerSecond).toBe(2000);
    expect(bins?.[1]?.kvTransferTimeSeconds).toBeNull();
  });

  it('bins the transfers of a run too large to spread into Math.min (200,000 records)', () => {
    const records: RequestRecord[] = [];
    for (let index = 0; index < 200_000; index++) {
      records.push({ requestId: `r${index}`, datasetIndex: index, warmup: false, inputLength: 8, expectedOutputLength: 2, scheduledTime: T0, success: true, arrivalTime: T0 + index / 1000, firstTokenTime: T0 + index / 1000 + 0.05, prefillHost: P0, decodeHost: D0, kvTransferTime: 0.004 });
    }
    const bins = summarizePd(records, T0)?.kvTransferOverTime;
    expect(bins?.reduce((sum, bin) => sum + bin.requests, 0)).toBe(200_000);
    expect(bins?.[0]?.startSinceT0Seconds).toBe(0);
  });
});
