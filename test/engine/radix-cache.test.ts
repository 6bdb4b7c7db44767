import { describe, expect, test } from 'vitest';
import { RadixCache } from '../../src/engine/core/radix-cache.js';
import type { TokenSource } from '../../src/engine/core/prefix-cache.js';
import { SeededRandom } from '../../src/utils/random.js';
import { makeHarness, runArrivals, tokenIds } from './engine-harness.js';
import type { TimedArrival } from './engine-harness.js';

const seq = (...ids: number[]): TokenSource => ({ tokenAt: (position) => ids[position] ?? -1 });

describe('RadixCache', () => {
  test('matches the longest cached prefix, splitting an edge where the match ends', () => {
    const cache = new RadixCache();
    expect(cache.insert(seq(1, 2, 3, 4, 5), 5, 0).addedTokens).toBe(5);
    expect(cache.match(seq(1, 2, 3, 9), 4, 1).length).toBe(3);
    expect(cache.insert(seq(1, 2, 3, 9, 9), 5, 2).addedTokens).toBe(2);
    expect(cache.totalTokens).toBe(7);
    expect(cache.match(seq(1, 2, 3, 4, 5), 5, 3).length).toBe(5);
    // The limit caps the match (SGLang always leaves at least one token to compute).
    expect(cache.match(seq(1, 2, 3, 4, 5), 4, 3).length).toBe(4);
    expect(cache.match(seq(7), 1, 3).length).toBe(0);
  });

  test('locks protect a path from eviction; unlocked leaves go least recently used first', () => {
    const cache = new RadixCache();
    cache.insert(seq(1, 1, 1), 3, 0);
    cache.insert(seq(2, 2, 2), 3, 10);
    cache.insert(seq(3, 3, 3), 3, 20);
    expect(cache.evictableTokens).toBe(9);
    const held = cache.match(seq(1, 1, 1), 3, 30);
    cache.lock(held.handle);
    expect(cache.evictableTokens).toBe(6);
    // Oldest unlocked is (2,2,2) at t=10.
    expect(cache.evict(1)).toBe(3);
    expect(cache.match(seq(2, 2, 2), 3, 40).length).toBe(0);
    expect(cache.match(seq(3, 3, 3), 3, 40).length).toBe(3);
    expect(cache.evict(100)).toBe(3);
    expect(cache.totalTokens).toBe(3);
    expect(cache.match(seq(1, 1, 1), 3, 50).length).toBe(3);
    cache.unlock(held.handle);
    expect(cache.evictableTokens).toBe(3);
    cache.reset();
    expect(cache.totalTokens).toBe(0);
  });

  test('a parent emptied by eviction is evicted in turn', () => {
    const cache = new RadixCache();
    cache.insert(seq(1, 2, 3), 3, 0);
    cache.insert(seq(1, 2, 4), 3, 0);
    expect(cache.totalTokens).toBe(4);
    expect(cache.evict(4)).toBe(4);
    expect(cache.totalTokens).toBe(0);
    expect(cache.evictableTokens).toBe(0);
  });
});

describe('SimEngine with the radix cache', () => {
  const simple = { kind: 'simple', stepMs: 10 } as const;
  const prefix = tokenIds(100);

  test('a shared prefix is reported as cached_tokens and skips prefill', () => {
    const harness = makeHarness({ profile: simple });
    runArrivals(harness, [
      { atMs: 0, input: { id: 'first', promptTokenIds: [...prefix, 1, 2], maxNewTokens: 2 } },
      { atMs: 100, input: { id: 'second', promptTokenIds: [...prefix, 3, 4, 5], maxNewTokens: 2 } },
    ]);
    expect(harness.finished.get('first')?.cachedTokens).toBe(0);
    expect(harness.finished.get('second')?.cachedTokens).toBe(100);
    const prefills = harness.steps.filter((step) => step.plan.kind === 'prefill').map((step) => step.plan.work.prefillTokens);
    expect(prefills).toEqual([102, 3]);
  });

  test('an identical prompt still computes its last token', () => {
    const harness = makeHarness({ profile: simple });
    runArrivals(harness, [
      { atMs: 0, input: { id: 'a', promptTokenIds: prefix, maxNewTokens: 1 } },
      { atMs: 50, input: { id: 'b', promptTokenIds: prefix, maxNewTokens: 1 } },
    ]);
    expect(harness.finished.get('b')?.cachedTokens).toBe(99);
    expect(harness.steps[1]?.plan.work.prefillTokens).toBe(1);
  });

  test('a multi-turn follow-up that repeats the answer hits prompt and answer', () => {
    const harness = makeHarness({ profile: simple });
    runArrivals(harness, [{ atMs: 0, input: { id: 'turn1', promptTokenIds: prefix, maxNewTokens: 5 } }]);
    const first = harness.finished.get('turn1')!;
    const answer = Array.from({ length: 5 }, (_unused, index) => first.outputTokenId(index));
    runArrivals(harness, [{ atMs: 1000, input: { id: 'turn2', promptTokenIds: [...prefix, ...answer, 7, 8], maxNewTokens: 1 } }]);
    // KV exists for the prompt and all outputs but the last (which was never fed back).
    expect(harness.finished.get('turn2')?.cachedTokens).toBe(104);
  });

  test('disableRadixCache turns caching off', () => {
    const harness = makeHarness({ profile: simple, disableRadixCache: true });
    runArrivals(harness, [
      { atMs: 0, input: { id: 'a', promptTokenIds: prefix, maxNewTokens: 1 } },
      { atMs: 50, input: { id: 'b', promptTokenIds: prefix, maxNewTokens: 1 } },
    ]);
    expect(harness.finished.get('b')?.cachedTokens).toBe(0);
  });

  test('flushCache empties the cache only when idle', () => {
    const harness = makeHarness({ profile: simple });
    runArrivals(harness, [{ atMs: 0, input: { id: 'a', promptTokenIds: prefix, maxNewTokens: 1 } }]);
    harness.engine.submit({ id: 'busy', promptTokenIds: [1], maxNewTokens: 3 }, 100);
    expect(harness.engine.flushCache()).toBe(false);
    runArrivals(harness, [], 100);
    expect(harness.engine.load().evictableTokens).toBeGreaterThan(0);
    expect(harness.engine.flushCache()).toBe(true);
    expect(harness.engine.load().evictableTokens).toBe(0);
    runArrivals(harness, [{ atMs: 1000, input: { id: 'c', promptTokenIds: prefix, maxNewTokens: 1 } }]);
    expect(harness.finished.get('c')?.cachedTokens).toBe(0);
  });

  test('KV accounting holds with shared prefixes, eviction and retraction', () => {
    const random = new SeededRandom(11);
    const maxTotalTokens = 4000;
    const harness = makeHarness({ profile: simple, maxTotalTokens, maxRunningRequests: 16, chunkedPrefillSize: 256, scheduleConservativeness: 0.3 });
    const systemPrompts = [tokenIds(300, 0), tokenIds(200, 5000), tokenIds(500, 9000)];
    const arrivals: TimedArrival[] = [];
    for (let index = 0; index < 200; index++) {
      const system = systemPrompts[random.integer(0, 2)]!;
      arrivals.push({
        atMs: index * 7,
        input: { id: `r${index}`, promptTokenIds: [...system, ...tokenIds(random.integer(1, 100), 20_000 + index * 100)], maxNewTokens: random.integer(1, 200) },
      });
    }
    runArrivals(harness, arrivals);
    expect(harness.finished.size).toBe(200);
    for (const step of harness.steps) expect(step.usedAfterBegin).toBeLessThanOrEqual(maxTotalTokens);
    const cached = [...harness.finished.values()].reduce((sum, view) => sum + view.cachedTokens, 0);
    expect(cached).toBeGreaterThan(200 * 150);
    expect(harness.engine.load().usedTokens).toBe(0);
    expect(harness.engine.load().evictableTokens).toBeLessThanOrEqual(maxTotalTokens);
  });
});
