import { CONTROL_TOKEN_HEADER } from '../../../src/routing/router/control-auth.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createBuiltinRoutingPolicy } from '../../../src/routing/policies/registry.js';
import { parseLoad, startRouter } from '../../../src/routing/router/index.js';
import { startScriptedUpstream } from '../scripted-upstream.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

describe('load reports', () => {
  it('reads SGLang\'s /v1/loads, its deprecated /get_load list and sglang-router\'s {"load": n} as token load', () => {
    expect(parseLoad({ load: 7 })).toEqual({ totalTokens: 7 });
    // /get_load: num_tokens summed over ranks (num_reqs already counts waiting requests; it is not the load).
    expect(parseLoad([{ dp_rank: 0, num_reqs: 3, num_waiting_reqs: 2, num_tokens: 900 }, { dp_rank: 1, num_reqs: 1, num_waiting_reqs: 0, num_tokens: 100 }])).toEqual({ totalTokens: 1000 });
    expect(parseLoad([{ dp_rank: 0, num_reqs: 3 }])).toBeUndefined();
    // /v1/loads (SGLang load_snapshot.py core keys): sums, except token_usage, which is averaged.
    const rank = (tokens: number, usage: number) => ({ dp_rank: 0, num_running_reqs: 1, num_waiting_reqs: 1, num_waiting_uncached_tokens: 10, num_used_tokens: tokens - 10, num_total_tokens: tokens, max_total_num_tokens: 1000, max_running_requests: 8, token_usage: usage, gen_throughput: 50, cache_hit_rate: 0, utilization: 0 });
    expect(parseLoad({ timestamp: '2026-11-23T08:00:00Z', version: '0.5.10', loads: [rank(300, 0.2), rank(100, 0.4)] })).toEqual({ totalTokens: 400, waitingUncachedTokens: 20, genThroughput: 100, tokenUsage: 0.30000000000000004 });
    expect(parseLoad({ loads: [] })).toBeUndefined();
    expect(parseLoad({ running: 3 })).toBeUndefined();
    expect(parseLoad([])).toBeUndefined();
    expect(parseLoad('busy')).toBeUndefined();
  });

  it('is polled for power_of_two, shown in GET /workers, and steers requests to the less loaded worker', async () => {
    const [busy, idle] = await Promise.all([startScriptedUpstream('busy'), startScriptedUpstream('idle')]);
    closers.push(() => busy!.close(), () => idle!.close());
    busy!.load = 40;
    idle!.load = 2;
    const router = await startRouter({
      workerUrls: [busy!.url, idle!.url],
      policy: createBuiltinRoutingPolicy('power_of_two', { seed: 3 }),
      healthCheckIntervalMs: 60_000,
      loadPollIntervalMs: 20,
      controlToken: 'polling-token',
    });
    closers.push(() => router.close());
    let loads: (number | null)[] = [];
    for (let attempt = 0; attempt < 50; attempt++) {
      const listed = (await (await request(`${router.url}/workers`, { headers: { [CONTROL_TOKEN_HEADER]: 'polling-token' } })).body.json()) as { workers: { load: number | null }[] };
      loads = listed.workers.map((worker) => worker.load);
      if (loads.every((load) => load !== null)) break;
      await sleep(20);
    }
    expect(loads).toEqual([40, 2]);
    for (let index = 0; index < 6; index++) {
      await (await request(`${router.url}/generate`, { method: 'POST', body: JSON.stringify({ text: 'x', stream: false }) })).body.dump();
    }
    // With two workers both are always compared, so the less loaded one takes everything.
    expect(idle!.seen).toHaveLength(6);
    expect(busy!.seen).toHaveLength(0);
  });
});
