import type { RoutingPolicy, RoutingPolicyFactory, RoutingRequest, WorkerState } from '../../../types/routing.js';
import { isEligible } from '../eligible.js';

/**
 * The eligible worker with the fewest requests in flight. Ties rotate: the scan starts one worker further each time,
 * so an idle cluster is filled evenly instead of always starting with the first worker.
 */
export class ShortestQueuePolicy implements RoutingPolicy {
  readonly name = 'shortest_queue';
  readonly needsRoutingKey = false;
  #start = 0;

  choose(_request: RoutingRequest, workers: readonly WorkerState[]): WorkerState | undefined {
    const count = workers.length;
    if (count === 0) return undefined;
    const start = this.#start % count;
    this.#start = start + 1;
    let best: WorkerState | undefined;
    for (let offset = 0; offset < count; offset++) {
      const worker = workers[(start + offset) % count] as WorkerState;
      if (!isEligible(worker)) continue;
      if (best === undefined || worker.inFlight < best.inFlight) best = worker;
    }
    return best;
  }
}

export const createShortestQueuePolicy: RoutingPolicyFactory = () => new ShortestQueuePolicy();
