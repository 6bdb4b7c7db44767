import type {
  PolledLoad,
  RoutingPolicy,
  RoutingPolicyFactory,
  RoutingPolicyOptions,
  RoutingRequest,
  WorkerState,
} from '../../../types/routing.js';
import { ServelabError } from '../../../errors/servelab-error.js';
import { eligibleWorkers } from '../eligible.js';

/** smg's defaults (router_args.py: least_load_kv_pressure_weight, _default_throughput, _mean_prefill_tokens). */
export const DEFAULT_LEAST_LOAD_SETTINGS: LeastLoadSettings = {
  kvPressureWeight: 0.15,
  defaultThroughput: 2000,
  meanPrefillTokens: 1024,
};

export interface LeastLoadSettings {
  /** Weight of the KV-pressure term `k / (1 - k)`, k the worker's token usage. */
  kvPressureWeight: number;
  /** Tokens/s assumed for a worker that reports no throughput. */
  defaultThroughput: number;
  /** Tokens a request counts for when its own count is unknown (always, on an HTTP router). */
  meanPrefillTokens: number;
}

/**
 * smg's least_load (model_gateway/src/policies/least_load.rs), rewritten: the worker that would clear its queue
 * soonest. For a worker with a load report (`/v1/loads`) the score is
 *   (waiting uncached tokens + tokens routed to it since that report) / throughput + weight × k / (1 − k),
 * throughput being its reported generation throughput (or `defaultThroughput`) and k its KV usage (capped at 0.999).
 * A worker without a report, while others have one, scores in-flight requests × `meanPrefillTokens` / the mean
 * reported throughput; with no reports at all the score is the in-flight count. Ties go to the first worker. Each
 * choice adds `meanPrefillTokens` to the chosen worker's routed tokens (smg's router counts the request's tokens when
 * it has them; an HTTP router does not), reset when the worker sends its next report.
 */
export class LeastLoadPolicy implements RoutingPolicy {
  readonly name = 'least_load';
  readonly needsRoutingKey = false;
  readonly usesPolledLoad = true;
  readonly settings: LeastLoadSettings;
  /** Tokens routed to a worker since its last report, with the sequence number of that report. */
  readonly #routedTokens = new Map<string, { sequence: number; tokens: number }>();

  constructor(options: RoutingPolicyOptions = {}) {
    const extra = options.extra ?? {};
    this.settings = {
      kvPressureWeight: numberOr(extra['kvPressureWeight'], DEFAULT_LEAST_LOAD_SETTINGS.kvPressureWeight),
      defaultThroughput: numberOr(extra['defaultThroughput'], DEFAULT_LEAST_LOAD_SETTINGS.defaultThroughput),
      meanPrefillTokens: numberOr(extra['meanPrefillTokens'], DEFAULT_LEAST_LOAD_SETTINGS.meanPrefillTokens),
    };
    const { kvPressureWeight, defaultThroughput, meanPrefillTokens } = this.settings;
    if (!(kvPressureWeight >= 0) || !(defaultThroughput > 0) || !(meanPrefillTokens >= 1)) {
      throw new ServelabError('INVALID_CONFIG', 'least_load settings are invalid: kvPressureWeight ≥ 0, defaultThroughput > 0 and meanPrefillTokens ≥ 1 are needed');
    }
  }

  choose(_request: RoutingRequest, workers: readonly WorkerState[]): WorkerState | undefined {
    const eligible = eligibleWorkers(workers);
    if (eligible.length <= 1) return eligible[0];
    let throughputSum = 0;
    let throughputCount = 0;
    let fleetHasLoads = false;
    for (const worker of eligible) {
      if (worker.polledLoad === undefined) continue;
      fleetHasLoads = true;
      const throughput = worker.polledLoad.genThroughput ?? 0;
      if (throughput > 0) {
        throughputSum += throughput;
        throughputCount++;
      }
    }
    const nominalThroughput = throughputCount > 0 ? throughputSum / throughputCount : this.settings.defaultThroughput;
    let best = eligible[0] as WorkerState;
    let bestScore = this.#score(best, nominalThroughput, fleetHasLoads);
    for (let position = 1; position < eligible.length; position++) {
      const worker = eligible[position] as WorkerState;
      const score = this.#score(worker, nominalThroughput, fleetHasLoads);
      if (score < bestScore) {
        best = worker;
        bestScore = score;
      }
    }
    return this.#routed(best);
  }

  onWorkerRemoved(worker: WorkerState): void {
    this.#routedTokens.delete(worker.url);
  }

  #score(worker: WorkerState, nominalThroughput: number, fleetHasLoads: boolean): number {
    const load = worker.polledLoad;
    if (load !== undefined) {
      const reported = load.genThroughput ?? 0;
      const throughput = reported > 0 ? reported : this.settings.defaultThroughput;
      const usage = Math.min(Math.max(load.tokenUsage ?? 0, 0), 0.999);
      return ((load.waitingUncachedTokens ?? 0) + this.#tokensSinceReport(worker.url, load)) / throughput + (this.settings.kvPressureWeight * usage) / (1 - usage);
    }
    if (fleetHasLoads) return (worker.inFlight * this.settings.meanPrefillTokens) / nominalThroughput;
    return worker.inFlight;
  }

  #tokensSinceReport(url: string, load: PolledLoad): number {
    const routed = this.#routedTokens.get(url);
    return routed !== undefined && routed.sequence === load.sequence ? routed.tokens : 0;
  }

  #routed(worker: WorkerState | undefined): WorkerState | undefined {
    if (worker === undefined) return undefined;
    const sequence = worker.polledLoad?.sequence ?? -1;
    const routed = this.#routedTokens.get(worker.url);
    const tokens = routed !== undefined && routed.sequence === sequence ? routed.tokens : 0;
    this.#routedTokens.set(worker.url, { sequence, tokens: tokens + this.settings.meanPrefillTokens });
    return worker;
  }
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}

export const createLeastLoadPolicy: RoutingPolicyFactory = (options) => new LeastLoadPolicy(options);
