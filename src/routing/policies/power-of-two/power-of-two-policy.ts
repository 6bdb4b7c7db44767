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
 * When both have reported their load (`/v1/loads`, else `/get_load`), load is their token load: KV tokens in use plus
 * waiting prompt tokens (`num_total_tokens`, `/get_load`'s `num_tokens`), summed over ranks, which is what
 * sglang-router 0.3.x compares. Otherwise both are compared by the router's own in-flight request counts (as smg and
 * sglang-router fall back to their local counters). smg itself compares the reports' KV usage ratio (`token_usage`)
 * instead of token counts; on equal pools the two order workers alike except that waiting prompts count here.
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
    if (first.polledLoad !== undefined && second.polledLoad !== undefined) {
      return first.polledLoad.totalTokens <= second.polledLoad.totalTokens ? first : second;
    }
    return first.inFlight <= second.inFlight ? first : second;
  }
}

export const createPowerOfTwoPolicy: RoutingPolicyFactory = (options) => new PowerOfTwoPolicy(options);
