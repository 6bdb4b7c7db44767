import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveColumns } from '../../src/analysis/derive.js';
import { percentileOfSorted, sortedFiniteValues } from '../../src/analysis/statistics.js';
import { NodeTest, RoutingTest } from '../../src/index.js';
import { servingLatencyFromSamples } from '../../src/engine/profile/path-distribution.js';
import { noticesOf } from '../helpers/run-outputs.js';
import type { HarnessMeasurements } from '../../src/types/harness.js';
import type { RequestRecord } from '../../src/types/record.js';

let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-virtual-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

function median(records: RequestRecord[], column: 'tpot' | 'total_latency' | 'server_ttft' | 'decode_time'): number {
  const values = records.map((record) => deriveColumns(record)[column] ?? Number.NaN);
  return percentileOfSorted(sortedFiniteValues(values), 50);
}

describe('virtual time', () => {
  it("gives a policy's onRequestFinished each request as it was routed, key included", async () => {
    const outputDir = join(workDirectory, 'finishes');
    const policyPath = fileURLToPath(new URL('../routing/fixtures/policy-counting-finishes.mjs', import.meta.url));
    // No sensitivity band: its two runs route every request through the policy again, and this count is the main run's.
    const result = await new RoutingTest({ virtualTime: true, numGpus: 3, routingPolicy: policyPath, datasetName: 'random-ids', randomInputLen: 40, randomOutputLen: 4, randomRangeRatio: 0.5, numPrompts: 30, requestRate: 20, outputDir, progress: 'off', twinSensitivity: 'off' }).run();
    const finishes = (globalThis as { servelabTestFinishes?: { requestId: string; keyLength: number; worker: number; success: boolean }[] }).servelabTestFinishes ?? [];
    expect(finishes).toHaveLength(30);
    for (const record of result.run.records) {
      const finish = finishes.find((seen) => seen.requestId === record.requestId);
      expect(finish?.success).toBe(true);
      expect(`node-${finish?.worker}`).toBe(record.host);
      expect((finish?.keyLength ?? 0) % 3).toBe(finish?.worker);
      expect(finish?.keyLength).toBeGreaterThan(2 * (record.inputLength - 1));
    }
  });

  it('writes the same files as a real-time run, marked simulated, and launches nothing', async () => {
    const outputDir = join(workDirectory, 'routing');
    const result = await new RoutingTest({ virtualTime: true, numGpus: 8, routingPolicy: 'cache_aware', datasetName: 'shared-prefix', gspNumGroups: 8, gspPromptsPerGroup: 25, gspSystemPromptLen: 512, gspQuestionLen: 32, gspOutputLen: 32, requestRate: 50, outputDir, progress: 'off' }).run();
    expect(result.run.info.simulated).toBe(true);
    expect(result.run.records).toHaveLength(200);
    for (const name of ['requests.csv', 'requests.jsonl', 'summary.json', 'config.json', 'nodes.csv']) {
      expect((await readFile(join(outputDir, name), 'utf8')).length).toBeGreaterThan(10);
    }
    expect(await readFile(join(outputDir, 'summary.json'), 'utf8')).toMatch(/"simulated": ?true/);
    // cache_aware keeps each prefix group on one node: every group's requests share a host.
    const hostsByGroup = new Map<number, Set<string>>();
    for (const record of result.run.records) {
      const hosts = hostsByGroup.get(record.prefixGroup as number) ?? new Set<string>();
      hosts.add(record.host as string);
      hostsByGroup.set(record.prefixGroup as number, hosts);
    }
    expect([...hostsByGroup.values()].every((hosts) => hosts.size === 1)).toBe(true);
    // After the first request of a group, its system prompt is cached.
    expect(result.run.records.filter((record) => (record.cachedTokens ?? 0) >= 512).length).toBeGreaterThan(150);
  });

  // The real-time half runs on this machine's timers, which a busy machine fires late. Instead of retrying until a
  // run happens to be on time, the tolerance is the real run's own stated noise (its harness measurements, as in
  // summary.json): a step of the sim-server that completes late, or a client event loop that reads a token late, moves
  // that request's client-side latency by up to that much. The p99 of each bounds all but 1% of requests, which moves
  // a median by a rank or two at most. On top of it, 5% for what arrival timing changes in batching (a request sent a
  // little late can join one step later).
  it('agrees with a real-time run of the same configuration on client-side latency medians, within the noise the real run states', async () => {
    const settings = { requestRate: 25, numPrompts: 120, randomInputLen: 512, randomOutputLen: 48, randomRangeRatio: 0.5, profile: 'llama-3-8b-h100', seed: 5, warmupRequests: 0, progress: 'off' } as const;
    const virtual = await new NodeTest({ ...settings, virtualTime: true, outputDir: join(workDirectory, 'agree-virtual') }).run();
    const real = await new NodeTest({ ...settings, outputDir: join(workDirectory, 'agree-real') }).run();
    const processes = (real.run.extras?.harness as HarnessMeasurements | undefined)?.processes ?? [];
    const stepLatenessP99Ms = processes.find((process) => process.role === 'sim-server')?.step_lateness_ms?.p99;
    const clientDelayP99Ms = processes.find((process) => process.role === 'client')?.event_loop_delay_ms?.p99;
    expect(stepLatenessP99Ms, 'the real run states its step lateness').toBeTypeOf('number');
    expect(clientDelayP99Ms, 'the real run states its event-loop delay').toBeTypeOf('number');
    const noiseSeconds = ((stepLatenessP99Ms as number) + (clientDelayP99Ms as number)) / 1000;
    // tpot spreads one request's late finish over its output tokens less one (at least 24 here: 48 × 0.5).
    const minOutputTokens = Math.min(...real.run.records.map((record) => record.actualOutputTokens ?? Infinity));
    const noiseOf = { tpot: noiseSeconds / (minOutputTokens - 1), decode_time: noiseSeconds, total_latency: noiseSeconds };
    for (const column of ['tpot', 'decode_time', 'total_latency'] as const) {
      const virtualMedian = median(virtual.run.records, column);
      const realMedian = median(real.run.records, column);
      const toleranceSeconds = 0.05 * virtualMedian + noiseOf[column];
      expect(Math.abs(realMedian - virtualMedian), `${column}: real ${realMedian} s vs virtual ${virtualMedian} s, tolerance ${toleranceSeconds} s (stated noise ${noiseOf[column]} s)`).toBeLessThan(toleranceSeconds);
    }
  });

  // The twin is compared with real runs of the same seed (bench/twin-engines.ts, calibrate's validation), which send
  // warmups first. A generated dataset draws its warmups as extra requests, all input lengths before all output
  // lengths, so a virtual run that drew none had every output length two places early against --warmup-requests 2.
  it('measures the same requests as a real-time run of the same seed that sent warmups first', async () => {
    const settings = { datasetName: 'random-ids', requestRate: 100, numPrompts: 30, randomInputLen: 64, randomOutputLen: 24, randomRangeRatio: 0.25, seed: 13, warmupRequests: 2, progress: 'off' } as const;
    const virtual = await new NodeTest({ ...settings, virtualTime: true, outputDir: join(workDirectory, 'warmups-virtual') }).run();
    const real = await new NodeTest({ ...settings, outputDir: join(workDirectory, 'warmups-real') }).run();
    const shape = (records: RequestRecord[]): string[] =>
      [...records].sort((a, b) => a.datasetIndex - b.datasetIndex).map((record) => `${record.datasetIndex}: ${record.inputLength} in, ${record.expectedOutputLength} out`);
    expect(real.run.records).toHaveLength(30);
    expect(shape(virtual.run.records)).toEqual(shape(real.run.records));
  });

  it('runs a closed loop of N users as N requests in flight', async () => {
    const result = await new NodeTest({ virtualTime: true, concurrency: 4, numPrompts: 200, randomInputLen: 64, randomOutputLen: 16, outputDir: join(workDirectory, 'closed'), progress: 'off' }).run();
    expect(result.metrics.concurrency.stages?.in_system?.peak).toBe(4);
    expect(result.run.records.every((record) => record.success)).toBe(true);
  });

  it("adds a profile's serving latency: the engine stamps ingress late, the client reads delivery after it", async () => {
    const profile = JSON.parse(await readFile(new URL('../../profiles/llama-3-8b-h100.json', import.meta.url), 'utf8')) as Record<string, unknown>;
    const settings = { requestRate: 20, numPrompts: 40, randomInputLen: 256, randomOutputLen: 16, seed: 9, warmupRequests: 0, progress: 'off', virtualTime: true } as const;
    // The built-in profile carries the embedded cluster's serving path: the plain twin drops it (JSON leaves out undefined).
    const plain = await new NodeTest({ ...settings, profile: JSON.stringify({ ...profile, name: 'plain', servingLatency: undefined }), outputDir: join(workDirectory, 'latency-plain') }).run();
    const served = await new NodeTest({
      ...settings,
      profile: JSON.stringify({ ...profile, name: 'served', servingLatency: { ingressMs: 5, deliveryMs: 7 } }),
      outputDir: join(workDirectory, 'latency-served'),
    }).run();
    expect(served.run.records).toHaveLength(40);
    served.run.records.forEach((record, index) => {
      const base = plain.run.records[index] as RequestRecord;
      const derived = deriveColumns(record);
      // Open-loop arrivals shift alike, so each request's engine work is the same and only the latency is added.
      expect(derived.ttft! - deriveColumns(base).ttft!).toBeCloseTo(0.012, 5);
      expect(derived.total_latency! - deriveColumns(base).total_latency!).toBeCloseTo(0.012, 5);
      expect(derived.tokenize_time).toBeCloseTo(0.005, 5);
      expect(derived.server_ttft! - deriveColumns(base).server_ttft!).toBeCloseTo(0.005, 5);
      expect(record.interTokenLatencies).toEqual(base.interTokenLatencies);
    });
  });

  it("draws each request's delivery from a profile's measured path (its quantiles), the same for one seed", async () => {
    const profile = JSON.parse(await readFile(new URL('../../profiles/llama-3-8b-h100.json', import.meta.url), 'utf8')) as Record<string, unknown>;
    // A loaded host's path: 1 ms at the median, a tail of 4-20 ms (src/engine/profile/path-distribution.ts).
    const distribution = { quantiles: [0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99], ingressMs: [0, 0, 0, 0, 0, 0, 0], deliveryMs: [0.8, 0.9, 1, 1.3, 4, 8, 20], ingressSamples: 16, deliverySamples: 400 };
    const run = (name: string) =>
      new NodeTest({
        requestRate: 40,
        numPrompts: 300,
        randomInputLen: 128,
        randomOutputLen: 4,
        seed: 5,
        warmupRequests: 0,
        progress: 'off',
        virtualTime: true,
        profile: JSON.stringify({ ...profile, name: 'drawn', servingLatency: { ingressMs: 0, deliveryMs: 2.27, distribution } }),
        outputDir: join(workDirectory, name),
      }).run();
    const deliveriesMs = (records: RequestRecord[]): number[] =>
      [...records].sort((a, b) => a.datasetIndex - b.datasetIndex).map((record) => ((record.firstTokenTime as number) - (record.serverFirstTokenTime as number)) * 1000);
    const first = deliveriesMs((await run('path-drawn')).run.records);
    expect(deliveriesMs((await run('path-drawn-again')).run.records)).toEqual(first);
    // With the constant alone (profiles from before) every request's delivery was 2.27 ms.
    const sorted = sortedFiniteValues(first);
    expect(percentileOfSorted(sorted, 50)).toBeGreaterThan(0.9);
    expect(percentileOfSorted(sorted, 50)).toBeLessThan(1.15);
    expect(percentileOfSorted(sorted, 90)).toBeGreaterThan(3);
    expect(percentileOfSorted(sorted, 90)).toBeLessThan(5.5);
    expect(Math.max(...first)).toBeLessThanOrEqual(20);
  });

  it('gives a closed loop the round trip: each user sends again when it has read the last token, not when the engine made it', async () => {
    const profile = JSON.parse(await readFile(new URL('../../profiles/llama-3-8b-h100.json', import.meta.url), 'utf8')) as Record<string, unknown>;
    const result = await new NodeTest({
      virtualTime: true,
      concurrency: 1,
      numPrompts: 12,
      randomInputLen: 128,
      randomOutputLen: 8,
      profile: JSON.stringify({ ...profile, name: 'served', servingLatency: { ingressMs: 5, deliveryMs: 7 } }),
      outputDir: join(workDirectory, 'closed-latency'),
      progress: 'off',
    }).run();
    const records = [...result.run.records].sort((a, b) => (a.arrivalTime as number) - (b.arrivalTime as number));
    expect(records).toHaveLength(12);
    for (let index = 1; index < records.length; index++) {
      // One user: its next request leaves as its last one's final token reaches it (delivery after the engine).
      expect((records[index]?.arrivalTime as number) - (records[index - 1]?.finishTime as number)).toBeCloseTo(0, 5);
    }
  });

  it("carries a built-in profile's serving path: through the router in a routing run, direct in a node run", async () => {
    const settings = { virtualTime: true, datasetName: 'random-ids', randomInputLen: 64, randomOutputLen: 8, numPrompts: 40, requestRate: 20, progress: 'off' } as const;
    const routing = await new RoutingTest({ ...settings, numGpus: 2, outputDir: join(workDirectory, 'built-in-path') }).run();
    const node = await new NodeTest({ ...settings, outputDir: join(workDirectory, 'built-in-path-node') }).run();
    const profile = JSON.parse(await readFile(new URL('../../profiles/llama-3-8b-h100.json', import.meta.url), 'utf8')) as {
      servingLatency: { networkMs: number; deliveryMs: number; routed: { routerQueueMs: number; networkMs: number; deliveryMs: number }; source: string };
    };
    const path = profile.servingLatency;
    expect(path.source).toMatch(/servelab route/);
    const check = (records: RequestRecord[], expected: { routerQueueMs: number; networkMs: number; deliveryMs: number }): void => {
      for (const record of records) {
        const derived = deriveColumns(record);
        // Epoch seconds keep about 0.2 µs, hence two decimals of a millisecond.
        expect(derived.queue_time_in_router! * 1000).toBeCloseTo(expected.routerQueueMs, 2);
        expect(derived.network_time! * 1000).toBeCloseTo(expected.networkMs, 2);
        expect(((record.firstTokenTime as number) - (record.serverFirstTokenTime as number)) * 1000).toBeCloseTo(expected.deliveryMs, 2);
      }
    };
    check(routing.run.records, path.routed);
    check(node.run.records, { routerQueueMs: 0, networkMs: path.networkMs, deliveryMs: path.deliveryMs });
    for (const value of [path.routed.routerQueueMs, path.routed.networkMs, path.routed.deliveryMs, path.networkMs, path.deliveryMs]) expect(value).toBeGreaterThan(0);
  });

  it('says which serving-path stages are zero when the profile carries none', async () => {
    const settings = { virtualTime: true, numGpus: 2, datasetName: 'random-ids', randomInputLen: 32, randomOutputLen: 4, numPrompts: 10, requestRate: 20, progress: 'off' } as const;
    const profile = JSON.parse(await readFile(new URL('../../profiles/llama-3-8b-h100.json', import.meta.url), 'utf8')) as Record<string, unknown>;
    const bare = await new RoutingTest({ ...settings, profile: JSON.stringify({ ...profile, name: 'bare', servingLatency: undefined }), outputDir: join(workDirectory, 'bare-path') }).run();
    const notices = noticesOf(bare);
    expect(notices.find((notice) => notice.startsWith('virtual time:'))).toMatch(/no router, network, ingress, delivery latency, so those stages are zero/);
    const builtIn = await new RoutingTest({ ...settings, outputDir: join(workDirectory, 'built-in-notices') }).run();
    expect(noticesOf(builtIn).some((notice) => notice.startsWith('virtual time:'))).toBe(false);
    // A calibrated path: its delivery holds the network both ways, so no stage is missing from a node test.
    const calibratedPath = servingLatencyFromSamples([0.02, 0.03, 0.02], [1.1, 1.2, 1.0]);
    const nodeSettings = { virtualTime: true, datasetName: 'random-ids', randomInputLen: 32, randomOutputLen: 4, numPrompts: 10, requestRate: 20, progress: 'off' } as const;
    const calibrated = await new NodeTest({ ...nodeSettings, profile: JSON.stringify({ ...profile, name: 'calibrated', servingLatency: calibratedPath }), outputDir: join(workDirectory, 'calibrated-path') }).run();
    expect(noticesOf(calibrated).filter((notice) => notice.startsWith('virtual time:'))).toEqual([]);
  });

  it('is refused for targets other than sim', () => {
    expect(() => new NodeTest({ virtualTime: true, target: 'attach', url: 'http://127.0.0.1:1' })).toThrow(/--virtual-time .* needs --target sim/);
  });
});
