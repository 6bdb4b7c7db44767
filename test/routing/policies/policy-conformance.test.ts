import { describe, expect, it } from 'vitest';
import { builtinRoutingPolicies, createBuiltinRoutingPolicy } from '../../../src/routing/policies/registry.js';
import type { RoutingPolicy, WorkerState } from '../../../src/types/routing.js';
import { SeededRandom } from '../../../src/utils/random.js';
import { makeWorkers, request, type MutableWorker } from './worker-fixture.js';

const keys = (count: number, seed: number): string[] => {
  const random = new SeededRandom(seed);
  return Array.from({ length: count }, () => `group ${random.integer(0, 5)} question ${random.integer(0, 1000)}`);
};

/** Drives a policy through a scripted life: requests start and finish, workers fail, drain, join and leave. */
function runScript(policy: RoutingPolicy, seed: number): number[] {
  const random = new SeededRandom(seed);
  const workers = makeWorkers(4);
  for (const worker of workers) policy.onWorkerAdded?.(worker);
  const inFlight: { key: string; worker: MutableWorker }[] = [];
  const chosen: number[] = [];
  const texts = keys(400, seed);
  for (let step = 0; step < texts.length; step++) {
    if (step === 100) (workers[1] as MutableWorker).healthy = false;
    if (step === 150) (workers[2] as MutableWorker).drained = true;
    if (step === 200) {
      const added = makeWorkers(1, 4)[0] as MutableWorker;
      workers.push(added);
      policy.onWorkerAdded?.(added);
    }
    if (step === 250) {
      const removed = workers.splice(0, 1)[0] as MutableWorker;
      policy.onWorkerRemoved?.(removed);
    }
    if (step === 300) (workers.find((worker) => worker.index === 1) as MutableWorker).healthy = true;
    const routed = request(`r${step}`, texts[step]);
    const worker = policy.choose(routed, workers as readonly WorkerState[]) as MutableWorker | undefined;
    expect(worker, `step ${step}`).toBeDefined();
    if (worker === undefined) continue;
    expect(workers, `step ${step}: chose a worker the router does not have`).toContain(worker);
    expect(worker.healthy && !worker.drained, `step ${step}: chose ineligible worker ${worker.index}`).toBe(true);
    worker.inFlight++;
    inFlight.push({ key: routed.routingKey, worker });
    chosen.push(worker.index);
    // Finish a random earlier request now and then, as responses would.
    if (inFlight.length > 0 && random.next() < 0.6) {
      const [finished] = inFlight.splice(random.integer(0, inFlight.length - 1), 1);
      if (finished !== undefined) {
        finished.worker.inFlight--;
        policy.onRequestFinished?.(request('done', finished.key), finished.worker, true);
      }
    }
  }
  return chosen;
}

describe.each(Object.keys(builtinRoutingPolicies))('routing policy %s (conformance)', (name) => {
  it('always returns a live worker while workers fail, drain, join and leave', () => {
    const chosen = runScript(createBuiltinRoutingPolicy(name, { seed: 7 }), 11);
    expect(chosen).toHaveLength(400);
    // The worker added at step 200 must be usable: it has to appear for load-spreading policies at least once.
    expect(new Set(chosen).size).toBeGreaterThanOrEqual(2);
  });

  it('returns undefined when no worker is eligible', () => {
    const policy = createBuiltinRoutingPolicy(name, { seed: 1 });
    const workers = makeWorkers(3);
    for (const worker of workers) policy.onWorkerAdded?.(worker);
    (workers[0] as MutableWorker).healthy = false;
    (workers[1] as MutableWorker).drained = true;
    (workers[2] as MutableWorker).healthy = false;
    expect(policy.choose(request('r', 'some text'), workers)).toBeUndefined();
    expect(policy.choose(request('r', 'some text'), [])).toBeUndefined();
  });

  it('never routes to the only unhealthy or drained workers among healthy ones', () => {
    const policy = createBuiltinRoutingPolicy(name, { seed: 3 });
    const workers = makeWorkers(5);
    for (const worker of workers) policy.onWorkerAdded?.(worker);
    (workers[0] as MutableWorker).healthy = false;
    (workers[3] as MutableWorker).drained = true;
    for (let step = 0; step < 200; step++) {
      const worker = policy.choose(request(`r${step}`, `prompt ${step % 7}`), workers);
      expect([1, 2, 4]).toContain(worker?.index);
    }
  });

  it('is deterministic for a seed', () => {
    const first = runScript(createBuiltinRoutingPolicy(name, { seed: 42 }), 5);
    const second = runScript(createBuiltinRoutingPolicy(name, { seed: 42 }), 5);
    expect(second).toEqual(first);
  });
});
