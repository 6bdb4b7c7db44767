import type {
  RoutingPolicy,
  RoutingPolicyFactory,
  RoutingPolicyOptions,
  RoutingRequest,
  WorkerState,
} from '../../../types/routing.js';
import { ServelabError } from '../../../errors/servelab-error.js';
import { eligibleWorkers, leastInFlight } from '../eligible.js';
import { RingCache, ringPosition } from '../hash-ring.js';

/** smg's defaults (PrefixHashConfig): the first 256 tokens, and a worker may carry 1.25 times the mean load. */
export const DEFAULT_PREFIX_TOKEN_COUNT = 256;
export const DEFAULT_LOAD_FACTOR = 1.25;
/**
 * servelab's router sees text, not token ids (smg's HTTP router is in the same position unless it tokenizes), so
 * the prefix is counted in characters: 4 characters a token, the usual English average.
 */
export const CHARACTERS_PER_TOKEN = 4;

export interface PrefixHashSettings {
  prefixTokenCount: number;
  loadFactor: number;
}

/**
 * smg's prefix_hash (model_gateway/src/policies/prefix_hash.rs), rewritten: a lighter cache-aware policy that keeps
 * no tree. The first `prefixTokenCount` tokens of the request are hashed onto a consistent-hash ring of the workers:
 * 1. the first usable worker clockwise takes the request if its load (requests in flight) is at most
 *    `loadFactor` × (total load + 1) / usable workers;
 * 2. otherwise the least-loaded worker among those under that bound (or, if none is, the ring's worker anyway);
 * smg's mean counts healthy workers, as here (drained workers are not usable here).
 *
 * Deliberate differences: the prefix is `prefixTokenCount × 4` characters of the routing text instead of token ids,
 * and a request with no text goes to the least-loaded worker (smg chooses none for a request without tokens, which
 * fails it).
 */
export class PrefixHashPolicy implements RoutingPolicy {
  readonly name = 'prefix_hash';
  readonly needsRoutingKey = true;
  readonly settings: PrefixHashSettings;
  readonly #rings = new RingCache();

  constructor(options: RoutingPolicyOptions = {}) {
    const extra = options.extra ?? {};
    this.settings = {
      prefixTokenCount: numberOr(extra['prefixTokenCount'], DEFAULT_PREFIX_TOKEN_COUNT),
      loadFactor: numberOr(extra['loadFactor'], DEFAULT_LOAD_FACTOR),
    };
    if (!(Number.isInteger(this.settings.prefixTokenCount) && this.settings.prefixTokenCount >= 1) || !(this.settings.loadFactor > 0)) {
      throw new ServelabError('INVALID_CONFIG', 'prefix_hash settings are invalid: prefixTokenCount must be a whole number ≥ 1 and loadFactor > 0');
    }
  }

  choose(request: RoutingRequest, workers: readonly WorkerState[]): WorkerState | undefined {
    const eligible = eligibleWorkers(workers);
    if (eligible.length === 0) return undefined;
    if (request.routingKey === '') return leastInFlight(eligible);
    const prefix = request.routingKey.slice(0, this.settings.prefixTokenCount * CHARACTERS_PER_TOKEN);
    // smg formats its 64-bit prefix hash as 16 hex digits and places that string on the ring.
    const key = ringPosition(prefix).toString(16).padStart(16, '0');
    const byUrl = new Map<string, WorkerState>();
    for (const worker of eligible) byUrl.set(worker.url, worker);
    const url = this.#rings.ringFor(workers.map((worker) => worker.url)).find(key, (candidate) => byUrl.has(candidate));
    const onRing = url === undefined ? undefined : byUrl.get(url);
    if (onRing === undefined) return leastInFlight(eligible);
    let totalLoad = 0;
    for (const worker of eligible) totalLoad += worker.inFlight;
    const withinBound = (worker: WorkerState): boolean =>
      totalLoad === 0 || worker.inFlight <= ((totalLoad + 1) / eligible.length) * this.settings.loadFactor;
    if (withinBound(onRing)) return onRing;
    let best: WorkerState | undefined;
    for (const worker of eligible) {
      if (withinBound(worker) && (best === undefined || worker.inFlight < best.inFlight)) best = worker;
    }
    return best ?? onRing;
  }
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}

export const createPrefixHashPolicy: RoutingPolicyFactory = (options) => new PrefixHashPolicy(options);
