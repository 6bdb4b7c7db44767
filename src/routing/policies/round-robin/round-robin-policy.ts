import type { RoutingPolicy, RoutingPolicyFactory, RoutingRequest, WorkerState } from '../../../types/routing.js';
import { eligibleWorkers } from '../eligible.js';

/**
 * Round robin over the eligible workers: a counter that advances once per request, taken modulo the number of
 * eligible workers at that moment (sglang-router does the same, so a worker leaving shifts the rotation).
 */
export class RoundRobinPolicy implements RoutingPolicy {
  readonly name = 'round_robin';
  readonly needsRoutingKey = false;
  #counter = 0;

  choose(_request: RoutingRequest, workers: readonly WorkerState[]): WorkerState | undefined {
    const eligible = eligibleWorkers(workers);
    if (eligible.length === 0) return undefined;
    const chosen = eligible[this.#counter % eligible.length];
    this.#counter++;
    return chosen;
  }
}

export const createRoundRobinPolicy: RoutingPolicyFactory = () => new RoundRobinPolicy();
