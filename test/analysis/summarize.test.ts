import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { fullyTracedRecord, recordAt, runOf } from './records.js';

const DIGITS = 6;

function handComputedRun() {
  return runOf([
    fullyTracedRecord(0),
    fullyTracedRecord(1),
    fullyTracedRecord(2, { actualOutputTokens: 21 }),
    recordAt({ scheduledTime: 3, arrivalTime: 3.001, success: false, error: 'http_5xx', httpStatus: 503 }),
    // Warmup requests never count.
    fullyTracedRecord(-5, { warmup: true }),
  ]);
}

describe('summarize', () => {
  const summary = summarize(handComputedRun(), { slo: { ttftMs: 50, tpotMs: 15 } });
  const duration = 2.25 - 0.001;

  it('counts outcomes by error class and measures duration from first arrival to last finish', () => {
    expect(summary.counts).toEqual({ total: 4, succeeded: 3, failed: 1, failedByClass: { http_5xx: 1 } });
    expect(summary.durationSeconds).toBeCloseTo(duration, DIGITS);
  });

  it('computes throughput from succeeded requests only', () => {
    expect(summary.tokens).toEqual({ totalInput: 300, totalOutput: 43, totalCached: 120 });
    expect(summary.throughput.requestsPerSecond).toBeCloseTo(3 / duration, 4);
    expect(summary.throughput.inputTokensPerSecond).toBeCloseTo(300 / duration, 3);
    expect(summary.throughput.outputTokensPerSecond).toBeCloseTo(43 / duration, 3);
    expect(summary.throughput.totalTokensPerSecond).toBeCloseTo(343 / duration, 3);
  });

  it('summarizes latencies over succeeded requests and send lag over every sent one', () => {
    expect(summary.latencies.total_latency?.count).toBe(3);
    expect(summary.latencies.total_latency?.mean).toBeCloseTo(0.249, DIGITS);
    expect(summary.latencies.tpot?.min).toBeCloseTo(0.01, DIGITS);
    expect(summary.latencies.tpot?.max).toBeCloseTo(0.02, DIGITS);
    // tpot values [0.01, 0.02, 0.02]: p50 0.02, mean 0.016667
    expect(summary.latencies.tpot?.mean).toBeCloseTo(0.05 / 3, DIGITS);
    expect(summary.latencies.send_lag?.count).toBe(4);
    expect(summary.latencies.send_lag?.p99).toBeCloseTo(0.001, DIGITS);
    expect(summary.interTokenLatency?.count).toBe(30);
    expect(summary.interTokenLatency?.mean).toBeCloseTo(0.02, 12);
  });

  it('describes the offered load against the target rate', () => {
    expect(summary.offeredLoad.targetRate).toBe(1);
    expect(summary.offeredLoad.achievedRate).toBeCloseTo(1, DIGITS);
    expect(summary.offeredLoad.achievedToTargetRatio).toBeCloseTo(1, DIGITS);
    expect(summary.offeredLoad.interArrivalCv).toBeCloseTo(0, DIGITS);
  });

  it("computes bench_serving's concurrency and the per-stage concurrency with a Little's-law check", () => {
    expect(summary.concurrency.benchServing).toBeCloseTo((3 * 0.249) / duration, DIGITS);
    const inSystem = summary.concurrency.stages?.in_system;
    expect(inSystem?.peak).toBe(1);
    expect(inSystem?.timeWeightedMean).toBeCloseTo((3 * 0.249) / duration, DIGITS);
    expect(inSystem?.littlesLaw.verdict).toBe('not_checked'); // four requests: too few to tell
    expect(summary.concurrency.stages?.waiting_in_server_queue?.timeWeightedMean).toBeCloseTo(0.03 / duration, DIGITS);
  });

  it('computes goodput: a request is good only when it meets every objective', () => {
    // Only the third request has tpot 10 ms ≤ 15 ms; all three have ttft 49 ms ≤ 50 ms.
    expect(summary.goodput?.goodRequests).toBe(1);
    expect(summary.goodput?.requestsPerSecond).toBeCloseTo(1 / duration, 4);
    expect(summary.goodput?.fraction).toBe(0.25);
    expect(summarize(handComputedRun()).goodput).toBeNull();
  });

  it('summarizes nodes of a routing test: share, cache hit ratio, imbalance, prefix-group affinity', () => {
    const hostA = 'http://127.0.0.1:30001';
    const hostB = 'http://127.0.0.1:30002';
    const run = runOf(
      [
        fullyTracedRecord(0, { host: hostA, prefixGroup: 0 }),
        fullyTracedRecord(0.1, { host: hostA, prefixGroup: 0 }),
        fullyTracedRecord(0.2, { host: hostA, prefixGroup: 1 }),
        fullyTracedRecord(0.3, { host: hostB, prefixGroup: 1, cachedTokens: 0 }),
      ],
      { testLevel: 'routing' },
    );
    const routing = summarize(run).routing;
    expect(routing?.nodes.map((node) => [node.host, node.requests, node.share])).toEqual([
      [hostA, 3, 0.75],
      [hostB, 1, 0.25],
    ]);
    expect(routing?.nodes[0]?.cacheHitRatio).toBeCloseTo(0.4, 12);
    expect(routing?.nodes[1]?.cacheHitRatio).toBe(0);
    // Requests [0.001, 0.25), [0.101, 0.35), [0.201, 0.45) on A overlap: three in flight at 0.201.
    expect(routing?.nodes[0]?.peakInFlight).toBe(3);
    expect(routing?.imbalanceMaxOverMean).toBe(1.5);
    expect(routing?.imbalanceCv).toBe(0.5);
    expect(routing?.prefixGroupAffinity).toEqual({ meanShareOnTopNode: 0.75, minShareOnTopNode: 0.5, groups: 2 });
  });

  it('omits the routing view for a node test with one host and handles an empty run', () => {
    expect(summarize(handComputedRun()).routing).toBeUndefined();
    const empty = summarize(runOf([]));
    expect(empty.counts.total).toBe(0);
    expect(empty.durationSeconds).toBe(0);
    expect(empty.latencies.ttft).toBeNull();
    expect(empty.offeredLoad.achievedRate).toBeNull();
  });
});
