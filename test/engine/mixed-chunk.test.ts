import { describe, expect, test } from 'vitest';
import { sglangServerArgs } from '../../src/cluster/launchers/sglang/sglang-server-args.js';
import { simServerArgs } from '../../src/cluster/launchers/sim/launch-sim-server.js';
import { resolveEngineSetup } from '../../src/engine/create-engine.js';
import { costModelFor } from '../../src/engine/profile/cost-model.js';
import { startSimServer } from '../../src/engine/http/start-sim-server.js';
import { SeededRandom } from '../../src/utils/random.js';
import { makeHarness, runArrivals, tokenIds } from './engine-harness.js';
import type { Harness, TimedArrival } from './engine-harness.js';

// Every figure below is virtual time from the test's own event loop (engine-harness.ts): no wall clock is read.
const simple10 = { kind: 'simple', stepMs: 10 } as const;
/** A roofline profile whose decode step is overhead-bound (like the real engine of bench/real-engine): 30 ms + work. */
const overheadBound = {
  kind: 'roofline',
  name: 'test-overhead-bound',
  description: 'test profile: a 30 ms fixed step cost, small slopes',
  model: 'test/model',
  hardware: 'none',
  derivation: ['made up for the mixed-chunk tests'] as string[],
  coefficients: {
    stepOverheadMs: 30,
    weightsFloorMs: 1,
    prefillPerTokenMs: 0.01,
    prefillAttentionPerPairMs: 1e-5,
    decodePerSequenceMs: 0.05,
    kvReadPerTokenMs: 0.001,
  },
  maxTotalTokens: 200_000,
  contextLength: 8192,
} as const;

/** Gaps between consecutive tokens of one request, in ms. */
function tokenGaps(harness: Harness, id: string): number[] {
  const times = harness.tokens.filter((token) => token.id === id).map((token) => token.timeMs);
  return times.slice(1).map((time, index) => time - (times[index] as number));
}

describe('mixed chunk (SGLang --enable-mixed-chunk)', () => {
  test('is off by default, as in SGLang: an arrival pauses decoding for its prefill step', () => {
    expect(resolveEngineSetup({}).config.enableMixedChunk).toBe(false);
    const harness = makeHarness({ profile: simple10 });
    runArrivals(harness, [
      { atMs: 0, input: { id: 'a', promptTokenIds: tokenIds(5), maxNewTokens: 5 } },
      { atMs: 15, input: { id: 'b', promptTokenIds: tokenIds(5), maxNewTokens: 2 } },
    ]);
    expect(harness.steps.every((step) => step.plan.mixedDecodeSequences === 0)).toBe(true);
    expect(tokenGaps(harness, 'a')).toEqual([10, 20, 10, 10]);
  });

  test('a mixed step decodes the running batch while it prefills the new prompt', () => {
    const harness = makeHarness({ profile: simple10, enableMixedChunk: true });
    runArrivals(harness, [
      { atMs: 0, input: { id: 'a', promptTokenIds: tokenIds(5), maxNewTokens: 5 } },
      { atMs: 15, input: { id: 'b', promptTokenIds: tokenIds(7, 100), maxNewTokens: 2 } },
    ]);
    // a: prefill [0,10], decode [10,20]; b arrives at 15; [20,30] prefills b AND decodes a.
    expect(harness.steps.map((step) => step.plan.kind)).toEqual(['prefill', 'decode', 'prefill', 'decode', 'decode']);
    const mixed = harness.steps[2]!.plan;
    expect(mixed.mixedDecodeSequences).toBe(1);
    expect(mixed.batchSize).toBe(1);
    expect(mixed.work.prefillTokens).toBe(7);
    expect(mixed.work.decodeSequences).toBe(1);
    // a holds its 5 prompt tokens and 2 decoded ones when the step reads its KV (its new slot included).
    expect(mixed.work.decodeKvTokens).toBe(7);
    expect(tokenGaps(harness, 'a')).toEqual([10, 10, 10, 10]);
    expect(harness.finished.get('a')?.finishedMs).toBe(50);
    // b's first token comes from the mixed step; it then decodes with a, not twice in the step it was prefilled in.
    expect(harness.tokens.filter((token) => token.id === 'b').map((token) => token.timeMs)).toEqual([30, 40]);
    expect(harness.tokens.filter((token) => token.timeMs === 30).map((token) => token.id)).toEqual(['a', 'b']);
  });

  test('the decode tokens are taken off the chunk budget (PrefillAdder mixed_with_decode_tokens)', () => {
    const harness = makeHarness({ profile: simple10, enableMixedChunk: true, chunkedPrefillSize: 64 });
    const arrivals: TimedArrival[] = [];
    for (let index = 0; index < 4; index++) {
      arrivals.push({ atMs: 0, input: { id: `r${index}`, promptTokenIds: tokenIds(8, index * 10), maxNewTokens: 20 } });
    }
    arrivals.push({ atMs: 15, input: { id: 'long', promptTokenIds: tokenIds(200, 1000), maxNewTokens: 2 } });
    runArrivals(harness, arrivals);
    const mixedSteps = harness.steps.filter((step) => step.plan.mixedDecodeSequences > 0).map((step) => step.plan);
    // 4 running sequences leave 60 of the 64 tokens for the long prompt, chunk after chunk.
    expect(mixedSteps.slice(0, 3).map((plan) => plan.work.prefillTokens)).toEqual([60, 60, 60]);
    for (const plan of mixedSteps) {
      expect(plan.work.prefillTokens + plan.work.decodeSequences).toBeLessThanOrEqual(64);
    }
    expect(harness.finished.get('long')?.finishReason).toEqual({ type: 'length', length: 2 });
  });

  test('needs chunked prefill, as in SGLang: with chunking off the engine does not mix', () => {
    const harness = makeHarness({ profile: simple10, enableMixedChunk: true, chunkedPrefillSize: -1 });
    runArrivals(harness, [
      { atMs: 0, input: { id: 'a', promptTokenIds: tokenIds(5), maxNewTokens: 5 } },
      { atMs: 15, input: { id: 'b', promptTokenIds: tokenIds(5, 100), maxNewTokens: 2 } },
    ]);
    expect(harness.steps.every((step) => step.plan.mixedDecodeSequences === 0)).toBe(true);
  });

  test('under Poisson arrivals the running batch decodes every step at about the decode-only step; without mixing it waits', () => {
    const arrivals = (): TimedArrival[] => {
      const random = new SeededRandom(7);
      const list: TimedArrival[] = [{ atMs: 1000, input: { id: 'long', promptTokenIds: tokenIds(256, 900_000), maxNewTokens: 400 } }];
      let atMs = 0;
      for (let index = 0; index < 200; index++) {
        atMs += -Math.log(1 - random.next()) * 125; // 8 requests/s
        list.push({ atMs, input: { id: `q${index}`, promptTokenIds: tokenIds(256 + (index % 5) * 64, index * 1000), maxNewTokens: 48 } });
      }
      return list;
    };
    const settings = { profile: overheadBound, chunkedPrefillSize: 1024, disableRadixCache: true };
    const costModel = costModelFor(resolveEngineSetup(settings).profile);
    const plain = makeHarness(settings);
    runArrivals(plain, arrivals());
    const mixed = makeHarness({ ...settings, enableMixedChunk: true });
    runArrivals(mixed, arrivals());
    const long = mixed.finished.get('long')!;
    // The steps after long's first token, up to its last: with mixing each one gives long a token.
    const lifetime = mixed.steps.filter((step) => step.plan.startMs >= long.prefillFinishedMs && step.plan.startMs < long.finishedMs);
    expect(lifetime).toHaveLength(399);
    expect(lifetime.filter((step) => step.plan.mixedDecodeSequences > 0).length).toBeGreaterThan(50);
    // What those steps would cost with their prefill taken out: the decode-only step at the same batch and KV.
    const decodeOnlyMs = lifetime.map((step) =>
      costModel.stepDurationMs({ ...step.plan.work, prefillTokens: 0, prefillAttentionPairs: 0 }),
    );
    const mean = (values: number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;
    const mixedGaps = tokenGaps(mixed, 'long');
    const plainGaps = tokenGaps(plain, 'long');
    expect(mean(mixedGaps)).toBeGreaterThan(mean(decodeOnlyMs));
    expect(mean(mixedGaps)).toBeLessThan(mean(decodeOnlyMs) * 1.15);
    // Without mixing every arrival costs the running batch a whole step with no token.
    expect(mean(plainGaps)).toBeGreaterThan(mean(mixedGaps) * 1.15);
    expect(mixed.engine.counters.finishedRequests).toBe(201);
  });

  test('launch arguments: sim-server and real SGLang get --enable-mixed-chunk only when it is on', () => {
    expect(simServerArgs({ name: 's', enableMixedChunk: true })).toContain('--enable-mixed-chunk');
    expect(simServerArgs({ name: 's' })).not.toContain('--enable-mixed-chunk');
    expect(sglangServerArgs({ modelPath: 'm', port: 1, enableMixedChunk: true })).toContain('--enable-mixed-chunk');
    expect(sglangServerArgs({ modelPath: 'm', port: 1 })).not.toContain('--enable-mixed-chunk');
  });

  test("launch arguments: a run that turns mixing off tells the sim-server so (absent, it takes a calibrated profile's scheduling)", () => {
    expect(simServerArgs({ name: 's', enableMixedChunk: false })).toContain('--no-enable-mixed-chunk');
    expect(simServerArgs({ name: 's' })).not.toContain('--no-enable-mixed-chunk');
    expect(simServerArgs({ name: 's', enableMixedChunk: true })).not.toContain('--no-enable-mixed-chunk');
  });

  test('a sim-server reports the setting in /server_info', async () => {
    const server = await startSimServer({ profile: simple10, enableMixedChunk: true });
    try {
      const info = (await (await fetch(`${server.url}/server_info`)).json()) as Record<string, unknown>;
      expect(info['enable_mixed_chunk']).toBe(true);
    } finally {
      await server.close();
    }
  });
});
