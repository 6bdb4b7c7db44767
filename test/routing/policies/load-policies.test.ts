import { describe, expect, it } from 'vitest';
import { createBuiltinRoutingPolicy } from '../../../src/routing/policies/registry.js';
import { makeWorkers, request, routeMany } from './worker-fixture.js';

describe('round_robin', () => {
  it('gives every worker an equal share, in order', () => {
    const workers = makeWorkers(4);
    const chosen = routeMany(createBuiltinRoutingPolicy('round_robin'), workers, new Array<string>(400).fill(''));
    expect(chosen.slice(0, 8)).toEqual([0, 1, 2, 3, 0, 1, 2, 3]);
    expect(workers.map((worker) => worker.inFlight)).toEqual([100, 100, 100, 100]);
  });
});

describe('random', () => {
  it('spreads roughly evenly and depends on the seed', () => {
    const workers = makeWorkers(4);
    const first = routeMany(createBuiltinRoutingPolicy('random', { seed: 1 }), workers, new Array<string>(4000).fill(''));
    for (const worker of workers) expect(worker.inFlight).toBeGreaterThan(850);
    const other = routeMany(createBuiltinRoutingPolicy('random', { seed: 2 }), makeWorkers(4), new Array<string>(4000).fill(''));
    expect(other).not.toEqual(first);
  });
});

describe('shortest_queue', () => {
  it('picks the worker with the fewest requests in flight', () => {
    const workers = makeWorkers(3);
    workers[0]!.inFlight = 5;
    workers[1]!.inFlight = 2;
    workers[2]!.inFlight = 9;
    const policy = createBuiltinRoutingPolicy('shortest_queue');
    expect(policy.choose(request('a'), workers)?.index).toBe(1);
  });

  it('fills an idle cluster evenly', () => {
    const workers = makeWorkers(4);
    routeMany(createBuiltinRoutingPolicy('shortest_queue'), workers, new Array<string>(40).fill(''));
    expect(workers.map((worker) => worker.inFlight)).toEqual([10, 10, 10, 10]);
  });
});

describe('power_of_two', () => {
  it('follows token load, not request counts, once both workers have reported', () => {
    // Worker 0 has few requests but long ones (many tokens); worker 1 many short ones.
    const workers = makeWorkers(2);
    workers[0]!.inFlight = 2;
    workers[0]!.polledLoad = { totalTokens: 60_000, sequence: 1 };
    workers[1]!.inFlight = 50;
    workers[1]!.polledLoad = { totalTokens: 5_000, sequence: 1 };
    const policy = createBuiltinRoutingPolicy('power_of_two', { seed: 9 });
    for (let step = 0; step < 20; step++) expect(policy.choose(request(`r${step}`), workers)?.index).toBe(1);
    // The same cluster judged by request counts would pick worker 0: the reports are what decides.
    delete workers[1]!.polledLoad;
    for (let step = 0; step < 20; step++) expect(policy.choose(request(`s${step}`), workers)?.index).toBe(0);
  });

  it('prefers the worker with the lower polled token load over in-flight counts', () => {
    const workers = makeWorkers(2);
    workers[0]!.polledLoad = { totalTokens: 100, sequence: 1 };
    workers[1]!.polledLoad = { totalTokens: 3, sequence: 1 };
    workers[1]!.inFlight = 50;
    const policy = createBuiltinRoutingPolicy('power_of_two', { seed: 9 });
    for (let step = 0; step < 20; step++) expect(policy.choose(request(`r${step}`), workers)?.index).toBe(1);
  });

  it('falls back to in-flight counts when no load was polled, and never picks the worst of three', () => {
    const workers = makeWorkers(3);
    workers[0]!.inFlight = 1;
    workers[1]!.inFlight = 50;
    workers[2]!.inFlight = 100;
    const policy = createBuiltinRoutingPolicy('power_of_two', { seed: 4 });
    const counts = [0, 0, 0];
    for (let step = 0; step < 300; step++) counts[policy.choose(request(`r${step}`), workers)!.index]!++;
    expect(counts[2]).toBe(0);
    expect(counts[0]).toBeGreaterThan(counts[1]!);
  });
});
