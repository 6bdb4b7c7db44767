import { describe, expect, it } from 'vitest';
import { createBuiltinRoutingPolicy } from '../../../src/routing/policies/registry.js';
import { HashRing } from '../../../src/routing/policies/hash-ring.js';
import type { RoutingRequest } from '../../../src/types/routing.js';
import { makeWorkers, request, type MutableWorker } from './worker-fixture.js';

/** Behaviour of the policies smg adds (lightseekorg/smg 73da68ca, model_gateway/src/policies/*.rs). */

const withHeaders = (headers: Record<string, string>, key = ''): RoutingRequest => ({ requestId: 'r', routingKey: key, headers });

describe('hash ring', () => {
  it('moves only the keys of a removed worker', () => {
    const urls = ['http://a', 'http://b', 'http://c', 'http://d'];
    const full = new HashRing(urls);
    const keys = Array.from({ length: 400 }, (_, index) => `key-${index}`);
    const before = keys.map((key) => full.find(key, () => true));
    const after = keys.map((key) => full.find(key, (url) => url !== 'http://b'));
    let moved = 0;
    for (let index = 0; index < keys.length; index++) {
      if (before[index] !== after[index]) {
        expect(before[index]).toBe('http://b');
        moved++;
      }
    }
    expect(moved).toBe(before.filter((url) => url === 'http://b').length);
    // 150 points per worker spread keys over all four.
    expect(new Set(before).size).toBe(4);
  });
});

describe('consistent_hashing', () => {
  it('sends one X-SMG-Routing-Key to one worker, and different keys to several', () => {
    const workers = makeWorkers(4);
    const policy = createBuiltinRoutingPolicy('consistent_hashing', { seed: 1 });
    const first = policy.choose(withHeaders({ 'x-smg-routing-key': 'group-7' }), workers);
    for (let step = 0; step < 20; step++) {
      workers[step % 4]!.inFlight += 5;
      expect(policy.choose(withHeaders({ 'x-smg-routing-key': 'group-7' }), workers)).toBe(first);
    }
    const spread = new Set(Array.from({ length: 50 }, (_, index) => policy.choose(withHeaders({ 'x-smg-routing-key': `g${index}` }), workers)?.index));
    expect(spread.size).toBeGreaterThan(1);
  });

  it('pins X-SMG-Target-Worker, and chooses none when that worker cannot take it', () => {
    const workers = makeWorkers(3);
    const policy = createBuiltinRoutingPolicy('consistent_hashing');
    expect(policy.choose(withHeaders({ 'x-smg-target-worker': '2' }), workers)?.index).toBe(2);
    workers[2]!.healthy = false;
    expect(policy.choose(withHeaders({ 'x-smg-target-worker': '2' }), workers)).toBeUndefined();
    expect(policy.choose(withHeaders({ 'x-smg-target-worker': '9' }), workers)).toBeUndefined();
  });

  it('hashes Authorization when there is no routing key, and moves a failed worker\'s keys only', () => {
    const workers = makeWorkers(3);
    const policy = createBuiltinRoutingPolicy('consistent_hashing');
    const owner = policy.choose(withHeaders({ authorization: 'Bearer tenant-1' }), workers) as MutableWorker;
    owner.healthy = false;
    const moved = policy.choose(withHeaders({ authorization: 'Bearer tenant-1' }), workers)!;
    expect(moved).not.toBe(owner);
    owner.healthy = true;
    expect(policy.choose(withHeaders({ authorization: 'Bearer tenant-1' }), workers)).toBe(owner);
  });
});

describe('prefix_hash', () => {
  it('keeps requests sharing their first 256 tokens (here 1024 characters) on one worker', () => {
    const workers = makeWorkers(4);
    const policy = createBuiltinRoutingPolicy('prefix_hash');
    const shared = 'x'.repeat(1024);
    const chosen = new Set(Array.from({ length: 8 }, (_, index) => policy.choose(request(`r${index}`, `${shared} question ${index}`), workers)?.index));
    expect(chosen.size).toBe(1);
  });

  it('walks to the least-loaded worker when the ring\'s worker carries more than 1.25 × the mean', () => {
    const workers = makeWorkers(4);
    const policy = createBuiltinRoutingPolicy('prefix_hash');
    const key = 'shared system prompt';
    const home = policy.choose(request('a', key), workers) as MutableWorker;
    home.inFlight = 10;
    for (const worker of workers) if (worker !== home) worker.inFlight = 2;
    workers.find((worker) => worker !== home)!.inFlight = 1;
    // mean = (10 + 2 + 2 + 1 + 1) / 4 = 4, bound 5: the home worker is over it, the least-loaded takes the request.
    const chosen = policy.choose(request('b', key), workers)!;
    expect(chosen.inFlight).toBe(1);
  });
});

describe('least_load', () => {
  it('scores reported queues by throughput and KV pressure', () => {
    const workers = makeWorkers(2);
    // Worker 0: 4000 queued tokens at 1000 tok/s = 4 s. Worker 1: 2000 at 2000 tok/s = 1 s, plus 0.15 × 0.9/0.1 = 1.35.
    workers[0]!.polledLoad = { totalTokens: 9000, waitingUncachedTokens: 4000, genThroughput: 1000, tokenUsage: 0.1, sequence: 1 };
    workers[1]!.polledLoad = { totalTokens: 9000, waitingUncachedTokens: 2000, genThroughput: 2000, tokenUsage: 0.9, sequence: 1 };
    const policy = createBuiltinRoutingPolicy('least_load');
    expect(policy.choose(request('a'), workers)?.index).toBe(1);
  });

  it('counts what it routed since the last report, and forgets it at the next report', () => {
    const workers = makeWorkers(2);
    workers[0]!.polledLoad = { totalTokens: 0, waitingUncachedTokens: 0, genThroughput: 2000, tokenUsage: 0, sequence: 1 };
    workers[1]!.polledLoad = { totalTokens: 0, waitingUncachedTokens: 0, genThroughput: 2000, tokenUsage: 0, sequence: 1 };
    const policy = createBuiltinRoutingPolicy('least_load');
    const chosen = Array.from({ length: 4 }, (_, index) => policy.choose(request(`r${index}`), workers)?.index);
    expect(chosen).toEqual([0, 1, 0, 1]);
    workers[0]!.polledLoad = { ...workers[0]!.polledLoad!, sequence: 2 };
    expect(policy.choose(request('fresh'), workers)?.index).toBe(0);
  });

  it('falls back to in-flight counts with no reports', () => {
    const workers = makeWorkers(3);
    workers[0]!.inFlight = 5;
    workers[1]!.inFlight = 1;
    workers[2]!.inFlight = 3;
    expect(createBuiltinRoutingPolicy('least_load').choose(request('a'), workers)?.index).toBe(1);
  });
});

describe('cache_aware below the threshold', () => {
  it('picks the least-loaded worker, not the smallest tree', () => {
    const workers = makeWorkers(2);
    const policy = createBuiltinRoutingPolicy('cache_aware');
    for (const worker of workers) policy.onWorkerAdded?.(worker);
    // Worker 1 gets a big tree; worker 0 is busier but below the imbalance thresholds.
    workers[0]!.inFlight = 5;
    expect(policy.choose(request('a', 'y'.repeat(500)), workers)?.index).toBe(1);
    workers[1]!.inFlight = 9;
    // An unrelated text misses every tree: the least-loaded worker (0) takes it although its tree is the smaller one.
    expect(policy.choose(request('b', 'z'.repeat(10)), workers)?.index).toBe(0);
  });
});
