import { describe, expect, it } from 'vitest';
import type { PdPhases } from '../../../src/engine/disaggregation/pd-phases.js';
import { VirtualPdCluster } from '../../../src/engine/virtual/virtual-pd-cluster.js';
import type { EngineRequestView } from '../../../src/types/engine.js';

/** A seeded uniform [0, 1) stream (mulberry32), so the queueing check is the same run every time. */
function uniform(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function prompt(length: number, salt: number): number[] {
  return Array.from({ length }, (_, index) => 1 + ((index * 7919 + salt * 104_729) % 50_000));
}

interface Finished {
  view: EngineRequestView;
  phases: PdPhases | undefined;
  tokenTimesMs: number[];
}

async function cluster(stepMs: number, link: { bandwidthBytesPerSecond: number; latencyMs: number }, kvBytesPerToken: number, decodeCount = 1) {
  const finished = new Map<string, Finished>();
  const tokenTimes = new Map<string, number[]>();
  const profile = { kind: 'simple' as const, stepMs, maxTotalTokens: 50_000_000, contextLength: 100_000, kvBytesPerToken, kvTransfer: link };
  const pd = await VirtualPdCluster.create({
    prefill: [{ profile, disableRadixCache: true, maxRunningRequests: 1024 }],
    decode: Array.from({ length: decodeCount }, () => ({ profile, maxRunningRequests: 1024 })),
    events: {
      onToken: (_decode, view, timeMs) => {
        const times = tokenTimes.get(view.id) ?? [];
        times.push(timeMs);
        tokenTimes.set(view.id, times);
      },
      onFinish: (_decode, view, _timeMs, phases) => finished.set(view.id, { view, phases, tokenTimesMs: tokenTimes.get(view.id) ?? [] }),
    },
  });
  return { pd, finished };
}

describe('VirtualPdCluster: a PD request against theory', () => {
  it('an idle request costs exactly prefill + transfer (bytes / bandwidth + latency) to its first token, and one decode step more to its second', async () => {
    // 1000 tokens x 131,072 bytes over 25 GB/s = 5.24288 ms, plus 0.5 ms latency; every step lasts 7 ms.
    const link = { bandwidthBytesPerSecond: 25e9, latencyMs: 0.5 };
    const { pd, finished } = await cluster(7, link, 131_072);
    pd.submit(0, 0, '42', { id: 'r', promptTokenIds: prompt(1000, 1), maxNewTokens: 3 }, 100);
    pd.runUntilIdle();
    const transferMs = (1000 * 131_072) / 25e6 + 0.5;
    const result = finished.get('r') as Finished;
    expect(result.view.outputTokens).toBe(3);
    // SGLang's decode server streams the first token (computed by the prefill server) when the request joins the
    // running batch, without a forward (decode.py, "Generate fake extend output"); each later token costs a decode step.
    expect(result.tokenTimesMs[0]).toBeCloseTo(100 + 7 + transferMs, 9);
    expect(result.tokenTimesMs[1]).toBeCloseTo(100 + 7 + transferMs + 7, 9);
    expect(result.tokenTimesMs[2]).toBeCloseTo(100 + 7 + transferMs + 14, 9);
    const phases = result.phases as PdPhases;
    expect(phases.prefillQueueMs).toBe(0);
    expect(phases.prefillForwardMs).toBe(7);
    expect(phases.kvTransferMs).toBeCloseTo(transferMs, 9);
    expect(phases.decodeQueueMs).toBe(0);
    // The decode server reserved the KV as the request arrived and held it through the prefill and the transfer.
    expect(phases.kvTransferWaitMs).toBeCloseTo(7 + transferMs, 9);
    expect(phases.prefillQueueMs + phases.prefillForwardMs + phases.kvTransferMs + phases.decodeQueueMs).toBeCloseTo((result.tokenTimesMs[0] as number) - 100, 9);
    // The decode server computed no prompt token: the prefill server did, once.
    expect(pd.simulator.engine(1).counters.prefilledTokens).toBe(0);
    expect(pd.simulator.engine(0).counters.prefilledTokens).toBe(1000);
  });

  it("keeps a request in the prefill server's bootstrap queue while its decode server cannot preallocate its KV", async () => {
    // The decode pool holds 2000 tokens. The first 1000-token request reserves 1000 (1000 + 512 reserved fit); the
    // second needs 1000 + 512 but only 2000 - 1000 - 512 (decode room for the first) = 488 are allocatable, so it is
    // preallocated only after the first finishes on the decode server, and its prefill starts then.
    const link = { bandwidthBytesPerSecond: 25e9, latencyMs: 0.5 };
    const finished = new Map<string, { phases: PdPhases | undefined; finishMs: number }>();
    const profile = { kind: 'simple' as const, stepMs: 7, maxTotalTokens: 100_000, contextLength: 10_000, kvBytesPerToken: 131_072, kvTransfer: link };
    const pd = await VirtualPdCluster.create({
      prefill: [{ profile }],
      decode: [{ profile: { ...profile, maxTotalTokens: 2000 } }],
      events: { onFinish: (_decode, view, timeMs, phases) => finished.set(view.id, { phases, finishMs: timeMs }) },
    });
    pd.submit(0, 0, '1', { id: 'first', promptTokenIds: prompt(1000, 1), maxNewTokens: 3 }, 0);
    pd.submit(0, 0, '2', { id: 'second', promptTokenIds: prompt(1000, 2), maxNewTokens: 3 }, 0);
    pd.runUntilIdle();
    const transferMs = (1000 * 131_072) / 25e6 + 0.5;
    const first = finished.get('first') as { phases: PdPhases; finishMs: number };
    const second = finished.get('second') as { phases: PdPhases; finishMs: number };
    expect(first.phases.prefillQueueMs).toBe(0);
    // First token at 7 + transfer, then two decode steps.
    expect(first.finishMs).toBeCloseTo(7 + transferMs + 14, 9);
    expect(second.phases.prefillQueueMs).toBeCloseTo(first.finishMs, 9);
    expect(second.phases.prefillForwardMs).toBe(7);
  });

  it('holds an arrived request in the decode queue until a running slot frees, then streams its first token without a forward', async () => {
    // One running slot on the decode server. Both prompts are prefilled in one 7 ms step and their transfers share the
    // link, arriving together; the first takes the slot (tokens at arrival, +7, +14 ms), the second waits the 14 ms.
    const link = { bandwidthBytesPerSecond: 25e9, latencyMs: 0.5 };
    const finished = new Map<string, PdPhases | undefined>();
    const profile = { kind: 'simple' as const, stepMs: 7, maxTotalTokens: 100_000, contextLength: 10_000, kvBytesPerToken: 131_072, kvTransfer: link };
    const pd = await VirtualPdCluster.create({
      prefill: [{ profile }],
      decode: [{ profile, maxRunningRequests: 1 }],
      events: { onFinish: (_decode, view, _timeMs, phases) => finished.set(view.id, phases) },
    });
    pd.submit(0, 0, '1', { id: 'first', promptTokenIds: prompt(1000, 1), maxNewTokens: 3 }, 0);
    pd.submit(0, 0, '2', { id: 'second', promptTokenIds: prompt(1000, 2), maxNewTokens: 3 }, 0);
    pd.runUntilIdle();
    expect(finished.get('first')?.decodeQueueMs).toBe(0);
    expect(finished.get('second')?.decodeQueueMs).toBeCloseTo(14, 9);
    expect(pd.simulator.engine(1).counters.prefilledTokens).toBe(0);
  });

  it('two transfers at once share the link: each takes twice the bytes / bandwidth, plus the latency', async () => {
    const link = { bandwidthBytesPerSecond: 25e9, latencyMs: 0.5 };
    const { pd, finished } = await cluster(7, link, 131_072);
    pd.submit(0, 0, '1', { id: 'a', promptTokenIds: prompt(1000, 1), maxNewTokens: 2 }, 0);
    pd.submit(0, 0, '2', { id: 'b', promptTokenIds: prompt(1000, 2), maxNewTokens: 2 }, 0);
    pd.runUntilIdle();
    const alone = (1000 * 131_072) / 25e6;
    for (const id of ['a', 'b']) expect((finished.get(id)?.phases as PdPhases).kvTransferMs).toBeCloseTo(2 * alone + 0.5, 9);
  });

  it('a link driven near capacity queues as processor sharing predicts: mean transfer time D / (1 - rho) + latency', async () => {
    // Poisson arrivals of 10 ms transfers (1000 tokens x 250,000 bytes at 25 GB/s) at rho = 0.8; the prefill step is
    // short (1 us) beside them, so the link alone queues. The link shares its bandwidth among transfers in flight
    // (kv-transfer-link.ts), an M/D/1 queue served by processor sharing, whose mean time in system is D / (1 - rho)
    // whatever the service distribution: 50 ms. FIFO service (the M/D/1 of a one-at-a-time link) would give
    // D + rho D / (2 (1 - rho)) = 30 ms, and an unshared link (every transfer at full bandwidth) 10 ms: a model broken
    // either way fails this check.
    const link = { bandwidthBytesPerSecond: 25e9, latencyMs: 0.5 };
    const serviceMs = 10;
    const rho = 0.8;
    const count = 20_000;
    const { pd, finished } = await cluster(0.001, link, 250_000, 4);
    const random = uniform(7);
    let atMs = 0;
    for (let index = 0; index < count; index++) {
      atMs += -Math.log(1 - random()) * (serviceMs / rho);
      pd.submit(0, index % 4, String(index), { id: `r${index}`, promptTokenIds: prompt(1000, index), maxNewTokens: 1 }, atMs);
    }
    pd.runUntilIdle();
    expect(finished.size).toBe(count);
    let sum = 0;
    for (const result of finished.values()) sum += (result.phases as PdPhases).kvTransferMs;
    const meanMs = sum / count;
    const predictedMs = serviceMs / (1 - rho) + link.latencyMs;
    // The tolerance covers this run's sampling error at rho = 0.8 (strongly correlated waits): 10%.
    expect(Math.abs(meanMs - predictedMs) / predictedMs).toBeLessThan(0.1);
  }, 60_000);
});
