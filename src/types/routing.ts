import type { EpochSeconds, Milliseconds } from './time.js';

/**
 * What a routing policy may know about one worker when it chooses. The caller (the builtin router, or a virtual-time
 * simulation) owns these values and keeps them current; a policy only reads them.
 */
export interface WorkerState {
  /** The worker's base URL, e.g. `http://127.0.0.1:30001` (in a routing test with taps: the tap's URL). */
  readonly url: string;
  /** A stable id for the worker's lifetime in the router (never reused), in the order workers were added. */
  readonly index: number;
  /** False while health checks fail or the circuit breaker is open. */
  readonly healthy: boolean;
  /** True while the worker is being removed: it finishes what it has but takes no new requests. */
  readonly drained: boolean;
  /** Requests the router has sent to it that have not finished. */
  readonly inFlight: number;
  /** What the worker itself last reported (`/v1/loads`, else `/get_load`), when the router polls it. */
  readonly polledLoad?: PolledLoad;
}

/**
 * A worker's own load report, summed over its data-parallel ranks. SGLang's `/v1/loads` gives every field; the
 * deprecated `/get_load` gives only `totalTokens` (its `num_tokens`), and sglang-router's `{"load": n}` only a number
 * that counts as `totalTokens`.
 */
export interface PolledLoad {
  /** KV tokens in use plus the prompts still waiting (SGLang's `num_total_tokens`, `/get_load`'s `num_tokens`). */
  readonly totalTokens: number;
  /** Waiting prompt tokens not served from the prefix cache (`num_waiting_uncached_tokens`). */
  readonly waitingUncachedTokens?: number;
  /** Decode throughput in tokens/s (`gen_throughput`). */
  readonly genThroughput?: number;
  /** KV pool usage, 0 to 1, averaged over ranks (`token_usage`). */
  readonly tokenUsage?: number;
  /** Grows by one with every report, so a policy can tell a fresh report from the one it already used. */
  readonly sequence: number;
}

/** What a policy is told about the request it routes. */
export interface RoutingRequest {
  /** The client's request id (`x-request-id`, or `rid` in a `/generate` body); may be empty when the client set none. */
  readonly requestId: string;
  /**
   * The text cache-aware routing matches prefixes on, as smg takes it: `text` (or `prompt`), else the `input_ids`
   * joined by spaces, else the chat messages' texts joined by spaces (see routing-key.ts). Empty when the policy does
   * not need it (`needsRoutingKey` false) or the body has none.
   */
  readonly routingKey: string;
  /**
   * The token ids `routingKey` was made of (joined by spaces), when the caller keeps them unchanged for the whole run
   * (a virtual-time run's prompts): cache-aware routing then holds views of them instead of copies of the key's text.
   */
  readonly routingKeyTokenIds?: ArrayLike<number>;
  /**
   * The request's headers, names lower-cased (consistent_hashing reads `x-smg-routing-key`, `x-smg-target-worker`,
   * `authorization`, `x-forwarded-for` and `cookie`). Absent where there are none (virtual-time runs).
   */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * A routing policy: pure decision logic. It never opens sockets, reads the wall clock or sets timers, so the same
 * object works inside the real router and inside a virtual-time simulation, where the caller drives every hook.
 */
export interface RoutingPolicy {
  readonly name: string;
  /** True when `choose` uses `request.routingKey`; the router skips parsing bodies otherwise. */
  readonly needsRoutingKey: boolean;
  /** True when `choose` uses `polledLoad`; the router polls each worker's `/v1/loads` (or `/get_load`) only then. */
  readonly usesPolledLoad?: boolean;
  /**
   * Picks a worker among `workers` (every worker the router knows, eligible or not). Must return one whose
   * `healthy` is true and `drained` false, or undefined when there is none.
   */
  choose(request: RoutingRequest, workers: readonly WorkerState[]): WorkerState | undefined;
  /** A request that `choose` routed to `worker` has ended (`success` false for errors and retries elsewhere). */
  onRequestFinished?(request: RoutingRequest, worker: WorkerState, success: boolean): void;
  onWorkerAdded?(worker: WorkerState): void;
  onWorkerRemoved?(worker: WorkerState): void;
}

/** Settings of the cache_aware policy; defaults follow smg's router_args.py (the same as sglang-router's). */
export interface CacheAwareSettings {
  /** Route by prefix when the longest match covers more than this fraction of the text (0.3). */
  cacheThreshold: number;
  /** Load imbalance needs `max - min` above this (64)... */
  balanceAbsThreshold: number;
  /** ...and `max` above `min` times this (1.5). */
  balanceRelThreshold: number;
  /** Characters each worker's tree may hold before least recently used leaves are evicted (2^26). */
  maxTreeSize: number;
}

export interface RoutingPolicyOptions {
  /** Seeds every random choice, so a run is reproducible. */
  seed?: number;
  cacheAware?: Partial<CacheAwareSettings>;
  /** Anything a custom policy module wants; builtin policies ignore it. */
  extra?: Record<string, unknown>;
}

export type RoutingPolicyFactory = (options: RoutingPolicyOptions) => RoutingPolicy;

/** One request as the tracing tap in front of a server saw it (docs/metrics.md). */
export interface TapRecord {
  /** `x-request-id` (or `rid` in the JSON body when the header is absent); empty when neither was set. */
  requestId: string;
  /** When the router's request reached the tap (epoch seconds, the tap process's clock). */
  routerSendTime: EpochSeconds;
  /** The server the tap fronts (its base URL). */
  host: string;
  /** Position of that server in the tap list (0-based). */
  hostIndex: number;
  /** HTTP status the server answered, absent when it never answered. */
  httpStatus?: number;
  /** Prefill/decode disaggregation (the builtin router's PD mode): the pair it chose and the room it injected (decimal text). */
  prefillHost?: string;
  decodeHost?: string;
  bootstrapRoom?: string;
}

/** Summary of a set of durations. */
export interface DurationSummary {
  count: number;
  meanMs: Milliseconds;
  p50Ms: Milliseconds;
  p99Ms: Milliseconds;
  maxMs: Milliseconds;
}

/**
 * The taps' own cost, measured inside the tap process. `inboundMs`: from the tap's request handler starting (request
 * headers parsed) to handing the request to the upstream connection (body read, record written, headers copied).
 * `relayMs`: per request, the time spent copying the upstream's response headers and chunks to the router (summed
 * over the chunks). Their sum is the latency the tap adds apart from one extra loopback hop, which only an A/B
 * comparison can see (`bench/router-overhead.ts` measures that).
 */
export interface TapOverhead {
  inboundMs: DurationSummary;
  relayMs: DurationSummary;
}
