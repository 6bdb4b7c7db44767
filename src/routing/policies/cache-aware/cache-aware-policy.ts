import type {
  CacheAwareSettings,
  RoutingPolicy,
  RoutingPolicyFactory,
  RoutingPolicyOptions,
  RoutingRequest,
  WorkerState,
} from '../../../types/routing.js';
import { ServelabError } from '../../../errors/servelab-error.js';
import { eligibleWorkers, leastInFlight } from '../eligible.js';
import { ApproximatePrefixTree } from './approximate-tree.js';

/** smg's defaults (router_args.py; sglang-router 0.3.x has the same). */
export const DEFAULT_CACHE_AWARE_SETTINGS: CacheAwareSettings = {
  cacheThreshold: 0.3,
  balanceAbsThreshold: 64,
  balanceRelThreshold: 1.5,
  maxTreeSize: 2 ** 26,
};

/**
 * Eviction brings a tree down to this fraction of `maxTreeSize`, so that a full tree is not walked on every insert.
 * (smg instead lets trees grow past the bound and evicts every `eviction_interval_secs`, 60 s; evicting at insert
 * keeps the bound exact and needs no timer, which a virtual-time simulation cannot have.)
 */
const EVICTION_LOW_WATER = 0.9;

/**
 * smg's cache-aware policy (model_gateway/src/policies/cache_aware.rs; sglang-router's before it), rewritten:
 * 1. Load is requests in flight. If `max - min > balanceAbsThreshold` and `max > min * balanceRelThreshold`, the
 *    cluster is imbalanced: the least-loaded worker gets the request (and its text is still inserted for it).
 * 2. Otherwise the longest prefix any worker holds is looked up. If it covers more than `cacheThreshold` of the text,
 *    the worker holding it gets the request; if not, the least-loaded worker (fewest requests in flight, the first on
 *    a tie), as smg's code does (its doc comment still says "smallest tree", which sglang-router once did).
 * 3. The text is inserted into the chosen worker's tree; LRU eviction keeps each tree under `maxTreeSize` characters.
 *
 * Deliberate differences from the source, all for workers that cannot take requests: loads are compared over eligible
 * workers only (the source also counts unhealthy ones), and prefixes held only by ineligible workers are ignored (the
 * source may pick one and then falls back to the first healthy worker).
 */
export class CacheAwarePolicy implements RoutingPolicy {
  readonly name = 'cache_aware';
  readonly needsRoutingKey = true;
  readonly settings: CacheAwareSettings;
  readonly #tree = new ApproximatePrefixTree();
  #candidates: Candidates | undefined;

  constructor(options: RoutingPolicyOptions = {}) {
    this.settings = { ...DEFAULT_CACHE_AWARE_SETTINGS, ...options.cacheAware };
    validate(this.settings);
  }

  choose(request: RoutingRequest, workers: readonly WorkerState[]): WorkerState | undefined {
    const eligible = eligibleWorkers(workers);
    if (eligible.length === 0) return undefined;
    const text = request.routingKey;
    const chosen = this.#isImbalanced(eligible) ? leastInFlight(eligible) : this.#byCache(text, eligible);
    if (chosen === undefined) return undefined;
    this.#tree.insert(text, chosen.url, request.routingKeyTokenIds);
    const size = this.#tree.sizeOf(chosen.url);
    if (size > this.settings.maxTreeSize) {
      this.#tree.evictTenant(chosen.url, Math.floor(this.settings.maxTreeSize * EVICTION_LOW_WATER));
    }
    return chosen;
  }

  onWorkerAdded(worker: WorkerState): void {
    this.#tree.addTenant(worker.url);
  }

  onWorkerRemoved(worker: WorkerState): void {
    this.#tree.removeTenant(worker.url);
  }

  /** Characters held for a worker's URL: for tests and diagnostics. */
  treeSize(url: string): number {
    return this.#tree.sizeOf(url);
  }

  #candidatesFor(eligible: readonly WorkerState[]): Candidates {
    const cached = this.#candidates;
    if (cached !== undefined && sameWorkers(cached.workers, eligible)) return cached;
    const byUrl = new Map<string, WorkerState>();
    for (const worker of eligible) byUrl.set(worker.url, worker);
    this.#candidates = { workers: [...eligible], byUrl, isCandidate: (tenant) => byUrl.has(tenant) };
    return this.#candidates;
  }

  #isImbalanced(eligible: readonly WorkerState[]): boolean {
    let max = -Infinity;
    let min = Infinity;
    for (const worker of eligible) {
      if (worker.inFlight > max) max = worker.inFlight;
      if (worker.inFlight < min) min = worker.inFlight;
    }
    return max - min > this.settings.balanceAbsThreshold && max > min * this.settings.balanceRelThreshold;
  }

  #byCache(text: string, eligible: readonly WorkerState[]): WorkerState | undefined {
    const { byUrl, isCandidate } = this.#candidatesFor(eligible);
    const match = this.#tree.prefixMatch(text, isCandidate);
    const matchRate = text.length === 0 ? 0 : match.matchedLength / text.length;
    if (matchRate > this.settings.cacheThreshold && match.tenant !== undefined) {
      const holder = byUrl.get(match.tenant);
      if (holder !== undefined) return holder;
    }
    return leastInFlight(eligible);
  }
}

/**
 * The eligible workers by URL, kept while the same worker objects stay eligible: building the map for every request
 * was 8% of a million-request virtual run over 64 workers.
 */
interface Candidates {
  workers: readonly WorkerState[];
  byUrl: Map<string, WorkerState>;
  isCandidate: (tenant: string) => boolean;
}

function sameWorkers(a: readonly WorkerState[], b: readonly WorkerState[]): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return false;
  return true;
}

function validate(settings: CacheAwareSettings): void {
  const problems: string[] = [];
  if (!(settings.cacheThreshold >= 0 && settings.cacheThreshold <= 1)) problems.push('cacheThreshold must lie in [0, 1]');
  if (!(settings.balanceAbsThreshold >= 0)) problems.push('balanceAbsThreshold must be ≥ 0');
  if (!(settings.balanceRelThreshold >= 1)) problems.push('balanceRelThreshold must be ≥ 1');
  if (!(settings.maxTreeSize >= 1)) problems.push('maxTreeSize must be ≥ 1');
  if (problems.length > 0) {
    throw new ServelabError('INVALID_CONFIG', `cache_aware settings are invalid: ${problems.join('; ')}`);
  }
}

export const createCacheAwarePolicy: RoutingPolicyFactory = (options) => new CacheAwarePolicy(options);
