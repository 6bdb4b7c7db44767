import { describe, expect, test } from 'vitest';
import { RadixCache } from '../../../src/engine/core/radix-cache.js';
import type { TokenSource } from '../../../src/engine/core/prefix-cache.js';
import type { EngineSettings } from '../../../src/engine/create-engine.js';
import { isServelabError } from '../../../src/errors/servelab-error.js';
import { SeededRandom } from '../../../src/utils/random.js';
import { makeHarness, runArrivals, tokenIds } from '../engine-harness.js';
import type { Harness, TimedArrival } from '../engine-harness.js';

// SGLang's --page-size in the simulated engine: chunks cut to whole pages, KV in whole pages, the prefix cache in
// whole pages (python/sglang/srt/managers/schedule_policy.py, mem_cache/allocator/paged.py, mem_cache/radix_cache.py).

const simple10 = { kind: 'simple', stepMs: 10 } as const;

function prefillChunks(harness: Harness): number[] {
  return harness.steps.filter((step) => step.plan.kind === 'prefill').map((step) => step.plan.work.prefillTokens);
}

function chunksOfOnePrompt(settings: EngineSettings, promptTokens: number): number[] {
  const harness = makeHarness({ profile: simple10, disableRadixCache: true, ...settings });
  runArrivals(harness, [{ atMs: 0, input: { id: 'p', promptTokenIds: tokenIds(promptTokens), maxNewTokens: 2 } }]);
  expect(harness.finished.get('p')?.finishReason?.type).toBe('length');
  return prefillChunks(harness);
}

/**
 * The prefill chunks of one prompt that arrives while `running` requests decode with mixed chunks on: their decode
 * tokens come off the chunk budget first (SGLang's num_mixed_decode_tokens), which is how a budget that is not whole
 * pages comes about (SGLang refuses a --chunked-prefill-size that is not, server_args.py).
 */
function chunksBesideRunningBatch(settings: EngineSettings, running: number, promptTokens: number): number[] {
  const harness = makeHarness({ profile: simple10, disableRadixCache: true, enableMixedChunk: true, ...settings });
  const arrivals: TimedArrival[] = Array.from({ length: running }, (_unused, index) => ({
    atMs: 0,
    input: { id: `run${index}`, promptTokenIds: tokenIds(4, index * 1000), maxNewTokens: 60 },
  }));
  arrivals.push({ atMs: 100, input: { id: 'p', promptTokenIds: tokenIds(promptTokens, 99_000), maxNewTokens: 2 } });
  runArrivals(harness, arrivals);
  expect(harness.finished.size).toBe(running + 1);
  const prompt = harness.steps.filter((step) => step.plan.startMs >= 100 && step.plan.kind === 'prefill');
  // The running batch decoded in every one of the prompt's steps: the budget left was the same in each.
  for (const step of prompt) expect(step.plan.mixedDecodeSequences).toBe(running);
  return prompt.map((step) => step.plan.work.prefillTokens);
}

describe('chunked prefill with pages', () => {
  test('a chunk cut by the budget ends on a page boundary: 300 tokens with 250 of a 256 budget left at page 64 go 192 + 108', () => {
    // Six decoding requests take 6 of the 256 tokens: 250 are left for the prompt, 3 pages of 64.
    expect(chunksBesideRunningBatch({ chunkedPrefillSize: 256, pageSize: 64 }, 6, 300)).toEqual([192, 108]);
    // Page size 1, as before: the budget is cut anywhere.
    expect(chunksBesideRunningBatch({ chunkedPrefillSize: 256, pageSize: 1 }, 6, 300)).toEqual([250, 50]);
    expect(chunksBesideRunningBatch({ chunkedPrefillSize: 256 }, 6, 300)).toEqual([250, 50]);
    // A budget of whole pages cuts where it did: 256 + 44.
    expect(chunksOfOnePrompt({ chunkedPrefillSize: 256, pageSize: 64 }, 300)).toEqual([256, 44]);
  });

  test('a prompt fits a step whole only if its pages do: 300 tokens (5 pages of 64) do not fit 300 tokens of budget', () => {
    // 20 decoding requests leave 300 of a 320-token budget.
    expect(chunksBesideRunningBatch({ chunkedPrefillSize: 320, pageSize: 64 }, 20, 300)).toEqual([256, 44]);
    expect(chunksBesideRunningBatch({ chunkedPrefillSize: 320, pageSize: 1 }, 20, 300)).toEqual([300]);
  });

  test('a budget left under a page admits no prompt: it waits until the running batch is done', () => {
    // 64 tokens a step at page 64: any running request leaves less than a page (SGLang's adder answers OTHER), so the
    // prompt starts only once the two running requests have finished.
    const harness = makeHarness({ profile: simple10, chunkedPrefillSize: 64, pageSize: 64, enableMixedChunk: true, disableRadixCache: true });
    runArrivals(harness, [
      { atMs: 0, input: { id: 'a', promptTokenIds: tokenIds(10), maxNewTokens: 5 } },
      { atMs: 0, input: { id: 'b', promptTokenIds: tokenIds(10, 500), maxNewTokens: 8 } },
      { atMs: 5, input: { id: 'p', promptTokenIds: tokenIds(30, 900), maxNewTokens: 2 } },
    ]);
    const late = harness.finished.get('p')!;
    expect(late.forwardEntryMs).toBeGreaterThanOrEqual(harness.finished.get('b')!.finishedMs);
    const unpaged = makeHarness({ profile: simple10, chunkedPrefillSize: 64, enableMixedChunk: true, disableRadixCache: true });
    runArrivals(unpaged, [
      { atMs: 0, input: { id: 'a', promptTokenIds: tokenIds(10), maxNewTokens: 5 } },
      { atMs: 0, input: { id: 'b', promptTokenIds: tokenIds(10, 500), maxNewTokens: 8 } },
      { atMs: 5, input: { id: 'p', promptTokenIds: tokenIds(30, 900), maxNewTokens: 2 } },
    ]);
    expect(unpaged.finished.get('p')!.forwardEntryMs).toBeLessThan(unpaged.finished.get('b')!.finishedMs);
  });

  test('the chunk budget is billed whole pages: three 100-token prompts at 256 a step and page 64 take two steps', () => {
    const arrivals: TimedArrival[] = ['a', 'b', 'c'].map((id, index) => ({
      atMs: 0,
      input: { id, promptTokenIds: tokenIds(100, index * 1000), maxNewTokens: 1 },
    }));
    const paged = makeHarness({ profile: simple10, chunkedPrefillSize: 256, pageSize: 64, disableRadixCache: true });
    runArrivals(paged, arrivals);
    // 128 + 128 pages' worth fill the budget: the third waits for the next step, whole.
    expect(prefillChunks(paged)).toEqual([200, 100]);
    const unpaged = makeHarness({ profile: simple10, chunkedPrefillSize: 256, disableRadixCache: true });
    runArrivals(unpaged, arrivals);
    expect(prefillChunks(unpaged)).toEqual([256, 44]);
  });

  test("a chunk size that is not whole pages is refused, as SGLang refuses to start (except a PD decode server's)", () => {
    expect(() => makeHarness({ profile: simple10, chunkedPrefillSize: 250, pageSize: 64 })).toThrow(
      /chunkedPrefillSize 250 is not a multiple of pageSize 64.*e\.g\. 192/,
    );
    // SGLang's automatic chunk size is checked the same way.
    expect(() => makeHarness({ profile: simple10, pageSize: 48 })).toThrow(/chunkedPrefillSize 8192 is not a multiple of pageSize 48/);
    expect(makeHarness({ profile: simple10, chunkedPrefillSize: 250, pageSize: 64, role: 'decode' }).engine.config.pageSize).toBe(64);
    expect(makeHarness({ profile: simple10, chunkedPrefillSize: -1, pageSize: 48 }).engine.config.pageSize).toBe(48);
  });
});

describe('KV in whole pages', () => {
  test("a request's KV occupies whole pages, and decoding takes a new page only when its last one is full", () => {
    const usedPerStep = (pageSize: number): number[] => {
      const harness = makeHarness({ profile: simple10, pageSize, disableRadixCache: true });
      runArrivals(harness, [{ atMs: 0, input: { id: 'a', promptTokenIds: tokenIds(16), maxNewTokens: 20 } }]);
      return harness.steps.map((step) => step.usedAfterBegin);
    };
    // Prefill writes 16 tokens (one page); the first decode step writes token 17 into a second page, the 17th decode
    // step token 33 into a third.
    const paged = usedPerStep(16);
    expect(paged.slice(0, 3)).toEqual([16, 32, 32]);
    expect(paged[16]).toBe(32);
    expect(paged[17]).toBe(48);
    expect(usedPerStep(1).slice(0, 3)).toEqual([16, 17, 18]);
  });

  test('admission reserves whole pages and one page more per request: the pool holds fewer requests', () => {
    // 1024 KV tokens; each request has 65 prompt tokens and 10 to decode. At page 1 it reserves 75 tokens: 13 fit. At
    // page 64 its prompt takes two pages (128), plus SGLang's one page of alignment slack and its 10 decode tokens.
    const batchSize = (pageSize: number): number => {
      const harness = makeHarness({ profile: simple10, pageSize, maxTotalTokens: 1024, disableRadixCache: true });
      runArrivals(
        harness,
        Array.from({ length: 20 }, (_unused, index) => ({
          atMs: 0,
          input: { id: `r${index}`, promptTokenIds: tokenIds(65, index * 1000), maxNewTokens: 10 },
        })),
      );
      expect(harness.finished.size).toBe(20);
      return harness.steps[0]?.plan.batchSize ?? 0;
    };
    expect(batchSize(64)).toBe(5);
    expect(batchSize(1)).toBe(13);
  });

  test('the pool is sized in whole pages, and token usage counts whole pages', () => {
    const harness = makeHarness({ profile: simple10, pageSize: 64, maxTotalTokens: 1000, disableRadixCache: true });
    expect(harness.engine.load().maxTotalTokens).toBe(960);
    harness.engine.submit({ id: 'a', promptTokenIds: tokenIds(100), maxNewTokens: 5 }, 0);
    harness.engine.beginStep(0);
    harness.engine.completeStep(10);
    expect(harness.engine.load().usedTokens).toBe(128);
    expect(harness.engine.load().tokenUsage).toBeCloseTo(128 / 960, 12);
  });

  for (const seed of [1, 2]) {
    test(`seed ${seed}: under random load at page 16 the pool stays within capacity in whole pages, retracts, and frees everything`, () => {
      const random = new SeededRandom(seed);
      const harness = makeHarness({
        profile: simple10,
        pageSize: 16,
        maxRunningRequests: 8,
        chunkedPrefillSize: 208,
        // One seed mixes decode tokens into prefill steps, which leaves budgets that are not whole pages.
        enableMixedChunk: seed === 2,
        maxTotalTokens: 3000,
        scheduleConservativeness: 0.05,
        seed,
      });
      const arrivals: TimedArrival[] = [];
      let atMs = 0;
      for (let index = 0; index < 120; index++) {
        atMs += random.exponential(1 / 8);
        // Some prompts share a prefix, so the cache's whole pages take part too.
        const shared = random.next() < 0.5 ? tokenIds(random.integer(1, 80), 0) : [];
        const own = tokenIds(random.integer(1, 400), (index + 1) * 1000);
        arrivals.push({ atMs, input: { id: `r${index}`, promptTokenIds: [...shared, ...own], maxNewTokens: random.integer(1, 400) } });
      }
      runArrivals(harness, arrivals);
      expect(harness.finished.size).toBe(120);
      for (const step of harness.steps) {
        expect(step.usedAfterBegin).toBeLessThanOrEqual(3000);
        expect(step.usedAfterBegin % 16).toBe(0);
        if (step.plan.kind === 'prefill') expect(step.plan.work.prefillTokens + step.plan.mixedDecodeSequences).toBeLessThanOrEqual(208);
      }
      expect(harness.engine.counters.retractions).toBeGreaterThan(0);
      expect(harness.engine.load().usedTokens).toBe(0);
      expect(harness.engine.isIdle).toBe(true);
    });
  }
});

describe('the prefix cache in whole pages', () => {
  const seq = (...ids: number[]): TokenSource => ({ tokenAt: (position) => ids[position] ?? -1 });
  const range = (from: number, count: number): number[] => Array.from({ length: count }, (_unused, index) => from + index);

  test('matches, inserts and splits only at page boundaries', () => {
    const cache = new RadixCache(4);
    expect(cache.insert(seq(...range(1, 10)), 10, 0).addedTokens).toBe(8);
    expect(cache.totalTokens).toBe(8);
    // 6 tokens in common: one whole page of 4 matches.
    expect(cache.match(seq(...range(1, 6), 99, 99, 99, 99), 10, 1).length).toBe(4);
    expect(cache.match(seq(...range(1, 10)), 10, 1).length).toBe(8);
    expect(cache.match(seq(...range(1, 10)), 7, 1).length).toBe(4);
  });

  test('pages that start with the same token but differ inside are separate children', () => {
    const cache = new RadixCache(4);
    cache.insert(seq(5, 6, 7, 8, 1, 1, 1, 1), 8, 0);
    // Same first token, a different first page: no match, and its own branch.
    expect(cache.match(seq(5, 6, 9, 9, 2, 2, 2, 2), 8, 1).length).toBe(0);
    expect(cache.insert(seq(5, 6, 9, 9, 2, 2, 2, 2), 8, 1).addedTokens).toBe(8);
    expect(cache.totalTokens).toBe(16);
    expect(cache.match(seq(5, 6, 7, 8, 1, 1, 1, 1), 8, 2).length).toBe(8);
    expect(cache.match(seq(5, 6, 9, 9, 2, 2, 2, 2), 8, 2).length).toBe(8);
    expect(cache.evict(100)).toBe(16);
    expect(cache.totalTokens).toBe(0);
  });

  test('a follow-up prompt reuses only the whole pages of a finished prompt', () => {
    const cachedTokens = (pageSize: number): number => {
      const harness = makeHarness({ profile: simple10, pageSize });
      const first = tokenIds(40);
      runArrivals(harness, [
        { atMs: 0, input: { id: 'first', promptTokenIds: first, maxNewTokens: 1 } },
        { atMs: 100, input: { id: 'second', promptTokenIds: [...first, ...tokenIds(10, 5000)], maxNewTokens: 1 } },
      ]);
      return harness.finished.get('second')?.cachedTokens ?? -1;
    };
    expect(cachedTokens(16)).toBe(32);
    expect(cachedTokens(1)).toBe(40);
  });
});

describe('page size setting', () => {
  for (const bad of [0, -16, 1.5, Number.NaN]) {
    test(`${String(bad)} is refused with a ServelabError that names the setting`, () => {
      let caught: unknown;
      try {
        makeHarness({ profile: simple10, pageSize: bad });
      } catch (error) {
        caught = error;
      }
      expect(isServelabError(caught) && caught.code).toBe('INVALID_CONFIG');
      expect((caught as Error).message).toMatch(/pageSize must be a positive integer/);
    });
  }
});
