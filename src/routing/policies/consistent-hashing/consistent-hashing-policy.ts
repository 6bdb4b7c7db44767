import type {
  RoutingPolicy,
  RoutingPolicyFactory,
  RoutingPolicyOptions,
  RoutingRequest,
  WorkerState,
} from '../../../types/routing.js';
import { SeededRandom } from '../../../utils/random.js';
import { eligibleWorkers, isEligible } from '../eligible.js';
import { RingCache } from '../hash-ring.js';

/** The headers smg reads (model_gateway/src/routers/common/header_utils.rs). */
export const ROUTING_KEY_HEADER = 'x-smg-routing-key';
export const TARGET_WORKER_HEADER = 'x-smg-target-worker';
/** Without a routing key, smg hashes the first of these that is present (if it is empty, none is used). */
const IMPLICIT_KEY_HEADERS = ['authorization', 'x-forwarded-for', 'cookie'] as const;

/**
 * smg's consistent_hashing (model_gateway/src/policies/consistent_hashing.rs), rewritten:
 * 1. `X-SMG-Target-Worker: i` pins the request to worker i (its position in the router's list); if that worker is
 *    missing or cannot take requests, no worker is chosen (smg answers an error, it does not reroute).
 * 2. Else `X-SMG-Routing-Key` (SGLang's benchmark sends it with `--gsp-send-routing-key`), else the `Authorization`,
 *    `X-Forwarded-For` or `Cookie` header, is placed on the hash ring; the first usable worker clockwise takes it.
 * 3. A request with none of these goes to a random usable worker.
 *
 * The ring holds every worker the router knows, so a worker that fails sends its keys to its clockwise neighbour and
 * gets them back when it recovers; no other key moves.
 */
export class ConsistentHashingPolicy implements RoutingPolicy {
  readonly name = 'consistent_hashing';
  readonly needsRoutingKey = false;
  readonly #random: SeededRandom;
  readonly #rings = new RingCache();

  constructor(options: RoutingPolicyOptions = {}) {
    this.#random = new SeededRandom(options.seed ?? 0);
  }

  choose(request: RoutingRequest, workers: readonly WorkerState[]): WorkerState | undefined {
    if (workers.length === 0) return undefined;
    const headers = request.headers ?? {};
    const target = headers[TARGET_WORKER_HEADER];
    if (target !== undefined) {
      const position = /^\d+$/.test(target.trim()) ? Number(target.trim()) : -1;
      const pinned = position >= 0 ? workers[position] : undefined;
      return pinned !== undefined && isEligible(pinned) ? pinned : undefined;
    }
    const key = nonEmpty(headers[ROUTING_KEY_HEADER]) ?? implicitKey(headers);
    if (key !== undefined) {
      const byUrl = new Map<string, WorkerState>();
      for (const worker of workers) if (isEligible(worker)) byUrl.set(worker.url, worker);
      const url = this.#rings.ringFor(workers.map((worker) => worker.url)).find(key, (candidate) => byUrl.has(candidate));
      return url === undefined ? undefined : byUrl.get(url);
    }
    const eligible = eligibleWorkers(workers);
    if (eligible.length === 0) return undefined;
    return eligible[this.#random.integer(0, eligible.length - 1)];
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function implicitKey(headers: Readonly<Record<string, string>>): string | undefined {
  const present = IMPLICIT_KEY_HEADERS.find((name) => headers[name] !== undefined);
  return present === undefined ? undefined : nonEmpty(headers[present]);
}

export const createConsistentHashingPolicy: RoutingPolicyFactory = (options) => new ConsistentHashingPolicy(options);
