import type { RoutingPolicy, RoutingRequest, WorkerState } from '../../../src/types/routing.js';

/** A worker whose state the test drives, as the router would. */
export type MutableWorker = { -readonly [Key in keyof WorkerState]: WorkerState[Key] };

export function makeWorkers(count: number, firstIndex = 0): MutableWorker[] {
  return Array.from({ length: count }, (_, offset) => ({
    url: `http://worker-${firstIndex + offset}.test:8000`,
    index: firstIndex + offset,
    healthy: true,
    drained: false,
    inFlight: 0,
  }));
}

export function request(requestId: string, routingKey = ''): RoutingRequest {
  return { requestId, routingKey };
}

/** Routes `count` requests, counting them in flight on the chosen worker; returns the chosen worker indexes. */
export function routeMany(policy: RoutingPolicy, workers: MutableWorker[], keys: string[]): number[] {
  return keys.map((key, position) => {
    const chosen = policy.choose(request(`r${position}`, key), workers as readonly WorkerState[]);
    if (chosen === undefined) throw new Error('no worker chosen');
    (chosen as MutableWorker).inFlight++;
    return chosen.index;
  });
}
