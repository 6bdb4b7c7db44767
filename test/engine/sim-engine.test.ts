import { describe, expect, test } from 'vitest';
import { SeededRandom } from '../../src/utils/random.js';
import { makeHarness, runArrivals, tokenIds } from './engine-harness.js';
import type { TimedArrival } from './engine-harness.js';

const simple10 = { kind: 'simple', stepMs: 10 } as const;

describe('SimEngine timing with a simple profile', () => {
  test('one request: first token after one prefill step, then one token per decode step', () => {
    const harness = makeHarness({ profile: simple10 });
    runArrivals(harness, [{ atMs: 0, input: { id: 'a', promptTokenIds: tokenIds(5), maxNewTokens: 4 } }]);
    expect(harness.tokens.map((token) => token.timeMs)).toEqual([10, 20, 30, 40]);
    const view = harness.finished.get('a');
    expect(view?.forwardEntryMs).toBe(0);
    expect(view?.prefillFinishedMs).toBe(10);
    expect(view?.finishedMs).toBe(40);
    expect(view?.finishReason).toEqual({ type: 'length', length: 4 });
  });

  test('requests arriving together share one prefill step and one decode batch', () => {
    const harness = makeHarness({ profile: simple10 });
    runArrivals(harness, [
      { atMs: 0, input: { id: 'a', promptTokenIds: tokenIds(5), maxNewTokens: 3 } },
      { atMs: 0, input: { id: 'b', promptTokenIds: tokenIds(7), maxNewTokens: 3 } },
    ]);
    expect(harness.steps.map((step) => step.plan.kind)).toEqual(['prefill', 'decode', 'decode']);
    expect(harness.steps[0]?.plan.work.prefillTokens).toBe(12);
    expect(harness.finished.get('a')?.finishedMs).toBe(30);
    expect(harness.finished.get('b')?.finishedMs).toBe(30);
  });

  test('a new prompt is prefilled before the running batch decodes again (prefill has priority)', () => {
    const harness = makeHarness({ profile: simple10 });
    runArrivals(harness, [
      { atMs: 0, input: { id: 'a', promptTokenIds: tokenIds(5), maxNewTokens: 5 } },
      { atMs: 15, input: { id: 'b', promptTokenIds: tokenIds(5), maxNewTokens: 2 } },
    ]);
    // a: prefill [0,10], decode [10,20]; b arrives at 15 and is prefilled in [20,30] while a waits.
    expect(harness.steps.map((step) => step.plan.kind)).toEqual(['prefill', 'decode', 'prefill', 'decode', 'decode', 'decode']);
    expect(harness.finished.get('b')?.forwardEntryMs).toBe(20);
    expect(harness.finished.get('b')?.queueEntryMs).toBe(15);
    expect(harness.finished.get('a')?.finishedMs).toBe(60);
  });

  test('a long prompt is chunked over steps at chunkedPrefillSize', () => {
    const harness = makeHarness({ profile: simple10, chunkedPrefillSize: 4096 });
    runArrivals(harness, [{ atMs: 0, input: { id: 'long', promptTokenIds: tokenIds(10_000), maxNewTokens: 2 } }]);
    const prefillChunks = harness.steps.filter((step) => step.plan.kind === 'prefill').map((step) => step.plan.work.prefillTokens);
    expect(prefillChunks).toEqual([4096, 4096, 1808]);
    expect(harness.finished.get('long')?.prefillFinishedMs).toBe(30);
    expect(harness.finished.get('long')?.finishedMs).toBe(40);
  });
});

describe('SimEngine invariants under random load', () => {
  for (const seed of [1, 2, 3]) {
    test(`seed ${seed}: running <= max, KV <= capacity, chunks <= budget, every request finishes`, () => {
      const random = new SeededRandom(seed);
      const maxRunningRequests = 8;
      const chunkedPrefillSize = 512;
      const maxTotalTokens = 6000;
      const harness = makeHarness({
        profile: { kind: 'roofline', ...ROOFLINE_TEST_PROFILE },
        maxRunningRequests,
        chunkedPrefillSize,
        maxTotalTokens,
        scheduleConservativeness: 0.3,
        seed,
      });
      const arrivals: TimedArrival[] = [];
      let atMs = 0;
      for (let index = 0; index < 150; index++) {
        atMs += random.exponential(1 / 15);
        arrivals.push({
          atMs,
          input: { id: `r${index}`, promptTokenIds: tokenIds(random.integer(1, 1500), index), maxNewTokens: random.integer(1, 400) },
        });
      }
      runArrivals(harness, arrivals);
      for (const step of harness.steps) {
        expect(step.runningAfterBegin).toBeLessThanOrEqual(maxRunningRequests);
        expect(step.usedAfterBegin).toBeLessThanOrEqual(maxTotalTokens);
        expect(step.plan.work.prefillTokens).toBeLessThanOrEqual(chunkedPrefillSize);
        expect(step.plan.durationMs).toBeGreaterThan(0);
      }
      expect(harness.finished.size).toBe(150);
      for (const arrival of arrivals) {
        const view = harness.finished.get(arrival.input.id);
        expect(view?.finishReason).toEqual({ type: 'length', length: arrival.input.maxNewTokens });
        expect(view?.outputTokens).toBe(arrival.input.maxNewTokens);
        expect(view!.queueEntryMs).toBeLessThanOrEqual(view!.forwardEntryMs);
        expect(view!.forwardEntryMs).toBeLessThan(view!.prefillFinishedMs);
        expect(view!.prefillFinishedMs).toBeLessThanOrEqual(view!.finishedMs);
      }
      // Low conservativeness over-admits, so decode runs out of KV and retracts: the path must have been exercised.
      expect(harness.engine.counters.retractions).toBeGreaterThan(0);
      expect(harness.engine.load().usedTokens).toBe(0);
      expect(harness.engine.isIdle).toBe(true);
    });
  }

  test('a tight pool with long chunked prompts still finishes everything within capacity', () => {
    const random = new SeededRandom(99);
    const maxTotalTokens = 3000;
    const harness = makeHarness({ profile: simple10, maxTotalTokens, chunkedPrefillSize: 256, maxRunningRequests: 64, scheduleConservativeness: 0.1, seed: 4 });
    const arrivals: TimedArrival[] = Array.from({ length: 120 }, (_unused, index) => ({
      atMs: index * 3,
      input: { id: `t${index}`, promptTokenIds: tokenIds(random.integer(1, 2500), index * 3000), maxNewTokens: random.integer(1, 300) },
    }));
    runArrivals(harness, arrivals);
    expect(harness.finished.size).toBe(120);
    for (const step of harness.steps) expect(step.usedAfterBegin).toBeLessThanOrEqual(maxTotalTokens);
    const aborted = [...harness.finished.values()].filter((view) => view.finishReason?.type === 'abort');
    expect(aborted).toEqual([]);
  });

  test('the same seed gives the same run; another seed other tokens', () => {
    const run = (seed: number): string => {
      const harness = makeHarness({ profile: simple10, seed });
      runArrivals(harness, [{ atMs: 0, input: { id: 'a', promptTokenIds: tokenIds(3), maxNewTokens: 6 } }]);
      const view = harness.finished.get('a')!;
      return Array.from({ length: 6 }, (_unused, index) => view.outputTokenId(index)).join(',');
    };
    expect(run(7)).toBe(run(7));
    expect(run(7)).not.toBe(run(8));
  });
});

describe('SimEngine admission limits', () => {
  test('never more than maxRunningRequests decode together; the rest wait in the queue', () => {
    const harness = makeHarness({ profile: simple10, maxRunningRequests: 2 });
    runArrivals(
      harness,
      ['a', 'b', 'c'].map((id) => ({ atMs: 0, input: { id, promptTokenIds: tokenIds(4), maxNewTokens: 3 } })),
    );
    expect(harness.steps[0]?.plan.batchSize).toBe(2);
    const third = harness.finished.get('c')!;
    expect(third.forwardEntryMs).toBe(30);
    expect(third.queueEntryMs).toBe(0);
  });

  test('admission reserves KV for future decode tokens', () => {
    // 100 KV tokens; each request needs 10 prompt + min(40 new, 4096) = 50 tokens at admission: two fit, not three.
    const harness = makeHarness({ profile: simple10, maxTotalTokens: 100 });
    runArrivals(
      harness,
      ['a', 'b', 'c'].map((id) => ({ atMs: 0, input: { id, promptTokenIds: tokenIds(10), maxNewTokens: 40 } })),
    );
    expect(harness.steps[0]?.plan.batchSize).toBe(2);
    expect(harness.finished.size).toBe(3);
  });

  test('validate answers like SGLang for prompts beyond the context length', () => {
    const harness = makeHarness({ profile: simple10, contextLength: 100 });
    expect(harness.engine.validate({ id: 'x', promptTokenIds: tokenIds(100), maxNewTokens: 1 })).toMatch(
      /longer than the model's context length \(100 tokens\)/,
    );
    expect(harness.engine.validate({ id: 'x', promptTokenIds: tokenIds(90), maxNewTokens: 20 })).toMatch(
      /maximum context length of 100 tokens/,
    );
    expect(harness.engine.validate({ id: 'x', promptTokenIds: tokenIds(90), maxNewTokens: 10 })).toBeNull();
  });

  test('a prompt larger than the KV pool is aborted at the next step, as SGLang rejects it', () => {
    const harness = makeHarness({ profile: simple10, maxTotalTokens: 50 });
    harness.engine.submit({ id: 'huge', promptTokenIds: tokenIds(60), maxNewTokens: 1 }, 0);
    expect(harness.finished.has('huge')).toBe(false);
    expect(harness.engine.hasWork).toBe(true);
    expect(harness.engine.beginStep(0)).toBeNull();
    const view = harness.finished.get('huge');
    expect(view?.finishReason?.type).toBe('abort');
    expect(harness.engine.isIdle).toBe(true);
  });

  test('abort frees the KV of a running request', () => {
    const harness = makeHarness({ profile: simple10 });
    harness.engine.submit({ id: 'a', promptTokenIds: tokenIds(20), maxNewTokens: 100 }, 0);
    harness.engine.beginStep(0);
    harness.engine.completeStep(10);
    expect(harness.engine.load().usedTokens).toBe(20);
    expect(harness.engine.abort('a', 12)).toBe(true);
    expect(harness.engine.load().usedTokens).toBe(0);
    expect(harness.finished.get('a')?.finishReason?.type).toBe('abort');
    expect(harness.engine.beginStep(12)).toBeNull();
  });
});

/** Round numbers so the cost expectations in tests are easy to follow. */
const ROOFLINE_TEST_PROFILE = {
  name: 'test',
  description: 'test',
  model: 'test-model',
  hardware: 'none',
  derivation: [],
  coefficients: {
    stepOverheadMs: 1,
    weightsFloorMs: 5,
    prefillPerTokenMs: 0.04,
    prefillAttentionPerPairMs: 0.000001,
    decodePerSequenceMs: 0.05,
    kvReadPerTokenMs: 0.0001,
  },
  maxTotalTokens: 100_000,
  contextLength: 8192,
};

describe('SimEngine new-token ratio (2026 SGLang)', () => {
  test('decays while decoding and resets to its initial value when the scheduler goes idle', () => {
    const harness = makeHarness({ profile: { kind: 'simple', stepMs: 10 } });
    const initial = harness.engine.newTokenRatio;
    harness.engine.submit({ id: 'a', promptTokenIds: [1, 2, 3], maxNewTokens: 50 }, 0);
    let nowMs = 0;
    for (let step = 0; step < 20; step++) {
      const plan = harness.engine.beginStep(nowMs)!;
      nowMs += plan.durationMs;
      harness.engine.completeStep(nowMs);
    }
    expect(harness.engine.newTokenRatio).toBeLessThan(initial);
    runArrivals(harness, [], nowMs);
    expect(harness.finished.has('a')).toBe(true);
    expect(harness.engine.newTokenRatio).toBe(initial);
  });
});
