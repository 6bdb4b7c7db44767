import type {
  RoutingPolicy,
  RoutingPolicyFactory,
  RoutingPolicyOptions,
  RoutingRequest,
  WorkerState,
} from '../../../types/routing.js';
import { SeededRandom } from '../../../utils/random.js';
import { eligibleWorkers } from '../eligible.js';

/** A uniformly random eligible worker, from a seeded generator so runs are reproducible. */
export class RandomPolicy implements RoutingPolicy {
  readonly name = 'random';
  readonly needsRoutingKey = false;
  readonly #random: SeededRandom;

  constructor(options: RoutingPolicyOptions = {}) {
    this.#random = new SeededRandom(options.seed ?? 0);
  }

  choose(_request: RoutingRequest, workers: readonly WorkerState[]): WorkerState | undefined {
    const eligible = eligibleWorkers(workers);
    if (eligible.length === 0) return undefined;
    return eligible[this.#random.integer(0, eligible.length - 1)];
  }
}

export const createRandomPolicy: RoutingPolicyFactory = (options) => new RandomPolicy(options);
