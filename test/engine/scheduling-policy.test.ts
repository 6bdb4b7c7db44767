import { describe, expect, test } from 'vitest';
import { makeHarness, runArrivals, tokenIds } from './engine-harness.js';
import type { TimedArrival } from './engine-harness.js';
import { lpmPolicy } from '../../src/engine/policy/lpm.js';
import type { EngineRequestView } from '../../src/types/engine.js';

const simple = { kind: 'simple', stepMs: 10 } as const;
const shared = tokenIds(200, 50_000);

/** One slot; after 'warm' fills the cache, 'cold' (no match) arrives before 'hot' (shares 200 tokens). */
function contention(policy: 'fcfs' | 'lpm'): string[] {
  const harness = makeHarness({ profile: simple, maxRunningRequests: 1, schedulePolicy: policy });
  const arrivals: TimedArrival[] = [
    { atMs: 0, input: { id: 'warm', promptTokenIds: shared, maxNewTokens: 5 } },
    { atMs: 1, input: { id: 'cold', promptTokenIds: tokenIds(200, 90_000), maxNewTokens: 2 } },
    { atMs: 2, input: { id: 'hot', promptTokenIds: [...shared, 1, 2, 3], maxNewTokens: 2 } },
  ];
  runArrivals(harness, arrivals);
  return [...harness.finished.values()].sort((left, right) => left.forwardEntryMs - right.forwardEntryMs).map((view) => view.id);
}

describe('waiting-queue policies', () => {
  test('fcfs admits in arrival order', () => {
    expect(contention('fcfs')).toEqual(['warm', 'cold', 'hot']);
  });

  test('lpm admits the request with the longest cached prefix first', () => {
    expect(contention('lpm')).toEqual(['warm', 'hot', 'cold']);
  });

  test('lpm pushes back uncached requests that share more than 32 tokens with one ahead of them (SGLang in-batch prefix caching)', () => {
    const group = tokenIds(40, 70_000);
    const view = (id: string, promptTokenIds: number[]) => ({ id, promptTokenIds, promptLength: promptTokenIds.length }) as unknown as EngineRequestView;
    const waiting = [
      view('group-1', [...group, 1]),
      view('group-2', [...group, 2]),
      view('lone', tokenIds(40, 80_000)),
      view('short-1', [...group.slice(0, 20), 1]),
      view('short-2', [...group.slice(0, 20), 2]),
      view('cached', [...group, 3]),
    ];
    // 'cached' already has 100 tokens in the cache: it goes first and is never pushed back.
    const cachedLength = new Map([['cached', 100]]);
    lpmPolicy.order(waiting, { nowMs: 0, runningRequests: 0, prefixLength: (request) => cachedLength.get(request.id) ?? 0 });
    // group-2 shares 40 (> 32) tokens with group-1 ahead of it: pushed back. The shorts share only 20: kept.
    expect(waiting.map((request) => request.id)).toEqual(['cached', 'group-1', 'lone', 'short-1', 'short-2', 'group-2']);
  });
});

describe('retraction and rejection', () => {
  test('when decode runs out of KV the least advanced requests are retracted, requeued, and still finish', () => {
    // Low conservativeness admits more than the pool can hold once they all decode.
    const harness = makeHarness({ profile: simple, maxTotalTokens: 1000, scheduleConservativeness: 0.05, maxRunningRequests: 32 });
    const arrivals: TimedArrival[] = Array.from({ length: 10 }, (_unused, index) => ({
      atMs: index,
      input: { id: `r${index}`, promptTokenIds: tokenIds(50, index * 1000), maxNewTokens: 200 },
    }));
    runArrivals(harness, arrivals);
    const views = [...harness.finished.values()];
    expect(views).toHaveLength(10);
    expect(views.every((view) => view.outputTokens === 200)).toBe(true);
    const retracted = views.filter((view) => view.numRetractions > 0);
    expect(retracted.length).toBeGreaterThan(0);
    expect(harness.engine.counters.retractions).toBe(views.reduce((sum, view) => sum + view.numRetractions, 0));
    for (const step of harness.steps) expect(step.usedAfterBegin).toBeLessThanOrEqual(1000);
  });

  test('a prompt of max_req_input_len tokens or more is aborted with SGLang\'s message', () => {
    const harness = makeHarness({ profile: simple, maxTotalTokens: 100 });
    // max_req_len = min(context - 1, 100 - 1) = 99; max_req_input_len = 94.
    expect(harness.engine.maxRequestInputTokens).toBe(94);
    harness.engine.submit({ id: 'edge', promptTokenIds: tokenIds(94), maxNewTokens: 1 }, 0);
    runArrivals(harness, []);
    expect(harness.finished.get('edge')?.finishReason).toEqual({
      type: 'abort',
      message: 'Input length (94 tokens) exceeds the maximum allowed length (94 tokens). Use a shorter input or enable --allow-auto-truncate.',
      status_code: 400,
      err_type: 'BadRequestError',
    });
    harness.engine.submit({ id: 'fits', promptTokenIds: tokenIds(93), maxNewTokens: 50 }, 0);
    runArrivals(harness, []);
    // max_new_tokens is clamped to max_req_len - prompt - 1 = 5 so the request can always finish.
    expect(harness.finished.get('fits')?.finishReason).toEqual({ type: 'length', length: 5 });
  });
});
