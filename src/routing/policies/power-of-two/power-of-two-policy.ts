import type {
  RoutingPolicy,
  RoutingPolicyFactory,
  RoutingPolicyOptions,
  RoutingRequest,
  WorkerState,
} from '../../../types/routing.js';
import { SeededRandom } from '../../../utils/random.js';
import { eligibleWorkers } from '../eligible.js';

/**
 * Power of two choices: two distinct random eligible workers, the less loaded one wins (the first on a tie).
 *
 * Load is what the worker last reported through `/get_load` (sglang-router polls it and caches the value), falling
 * back to the router's own in-flight count for a worker that has not reported (as sglang-router falls back to its
 * local counter).
 */
export class PowerOfTwoPolicy implements RoutingPolicy {
  readonly name = 'power_of_two';
  readonly needsRoutingKey = false;
  readonly usesPolledLoad = true;
  readonly #random: SeededRandom;

  constructor(options: RoutingPolicyOptions = {}) {
    this.#random = new SeededRandom(options.seed ?? 0);
  }

  choose(_request: RoutingRequest, workers: readonly WorkerState[]): WorkerState | undefined {
    const eligible = eligibleWorkers(workers);
    if (eligible.length <= 1) return eligible[0];
    const firstIndex = this.#random.integer(0, eligible.length - 1);
    // Draw the second from the remaining workers, so the two are distinct without a rejection loop.
    let secondIndex = this.#random.integer(0, eligible.length - 2);
    if (secondIndex >= firstIndex) secondIndex++;
    const first = eligible[firstIndex] as WorkerState;
    const second = eligible[secondIndex] as WorkerState;
    return loadOf(first) <= loadOf(second) ? first : second;
  }
}

function loadOf(worker: WorkerState): number {
  return worker.polledLoad ?? worker.inFlight;
}

export const createPowerOfTwoPolicy: RoutingPolicyFactory = (options) => new PowerOfTwoPolicy(options);
