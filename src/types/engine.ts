import type { Milliseconds } from './time.js';

/**
 * Interfaces of the simulated SGLang engine (src/engine/). The core is pure: every method that depends on time takes the
 * current time as a monotonic millisecond reading, so one implementation serves the real-time HTTP driver and the
 * virtual-time (discrete-event) driver alike.
 */

/** Waiting-queue orderings. `fcfs` and `lpm` are built in; any other string is a module path (see SchedulingPolicy). */
export type SchedulePolicyName = 'fcfs' | 'lpm' | (string & {});

/** Scheduler settings, named after SGLang's server arguments. */
export interface EngineConfig {
  /** Most requests in the running batch (SGLang `--max-running-requests`). */
  maxRunningRequests: number;
  /** Most prompt tokens prefilled in one step; longer prompts are chunked (`--chunked-prefill-size`; <= 0 disables). */
  chunkedPrefillSize: number;
  /** KV pool capacity in tokens (`--max-total-tokens`). */
  maxTotalTokens: number;
  /** Longest prompt plus output one request may have (the model's context length). */
  contextLength: number;
  schedulePolicy: SchedulePolicyName;
  /** Multiplies the share of future decode tokens reserved when admitting (`--schedule-conservativeness`). */
  scheduleConservativeness: number;
  /** Turns the radix prefix cache off (`--disable-radix-cache`). */
  disableRadixCache: boolean;
  /**
   * SGLang's `--enable-mixed-chunk`: a prefill step also carries one decode token of every running request, and those
   * tokens count against the chunk budget. Needs chunking (chunkedPrefillSize > 0), as in SGLang. Off by default.
   */
  enableMixedChunk: boolean;
  /**
   * KV tokens per page (SGLang's `--page-size`, 1 by default; some attention backends need 16, 32 or 64): KV is
   * allocated in whole pages per request, a prompt chunk cut short by the chunk budget ends on a page boundary, and the
   * prefix cache matches whole pages.
   */
  pageSize: number;
  /** Seeds generated token ids, so a run is reproducible. */
  seed: number;
}

/** Step-cost coefficients of a roofline-style profile (all durations in milliseconds). */
export interface RooflineCoefficients {
  /** Fixed cost of any step: scheduling, kernel launches, sampling. */
  stepOverheadMs: Milliseconds;
  /** Lower bound of the variable part: reading all weights once at the GPU's memory bandwidth. */
  weightsFloorMs: Milliseconds;
  /** Dense compute per prefilled token. */
  prefillPerTokenMs: Milliseconds;
  /**
   * Attention cost per (query token, key token) pair in a prefill chunk: a chunk of c new tokens after p tokens already
   * in KV costs c * (p + (c + 1) / 2) pairs, quadratic in the chunk length.
   */
  prefillAttentionPerPairMs: Milliseconds;
  /** Dense compute per sequence in a decode step (one token each). */
  decodePerSequenceMs: Milliseconds;
  /** Reading one token's KV from memory during decode. */
  kvReadPerTokenMs: Milliseconds;
}

/**
 * What a real server adds around the engine's steps, measured by calibration on an idle server. The virtual-time twin
 * applies both to every request; a real-time simulated server serves over real HTTP instead and adds neither.
 */
export interface ServingLatency {
  /** From the server receiving a request to the scheduler being able to run it (tokenizer, inter-process hop). */
  ingressMs: Milliseconds;
  /** From the engine finishing a token to the client reading it (detokenizer and HTTP hops, network). */
  deliveryMs: Milliseconds;
  /** From the client sending a request to the server receiving it (`network_time` of a node test). */
  networkMs?: Milliseconds;
  /** The path through a router, for routing tests: replaces `networkMs` and `deliveryMs` there. */
  routed?: RoutedServingLatency;
  /** How these figures were measured: what setup, what run, which statistic. */
  source?: string;
  /**
   * The direct path's spread, where calibration measured one (profiles from before have only the constants): the
   * virtual-time twin draws each request's delivery from these quantiles instead of adding `deliveryMs` to all.
   */
  distribution?: ServingPathDistribution;
}

/** Quantiles of the direct path's stages as calibration measured them (src/engine/profile/path-distribution.ts). */
export interface ServingPathDistribution {
  /** Probabilities, strictly increasing within [0, 1] (e.g. 0.1 ... 0.99). */
  quantiles: number[];
  /** `ingressMs` at each probability (non-decreasing). */
  ingressMs: number[];
  /** `deliveryMs` at each probability (non-decreasing). */
  deliveryMs: number[];
  /** How many requests each stage's quantiles were read from. */
  ingressSamples: number;
  deliverySamples: number;
}

/** What a request's path costs through a router (routing tests). */
export interface RoutedServingLatency {
  /** From the client sending a request to the router forwarding it (`queue_time_in_router`). */
  routerQueueMs: Milliseconds;
  /** From the router forwarding a request to the server receiving it (`network_time`). */
  networkMs: Milliseconds;
  /** From the engine finishing a token to the client reading it through the router. */
  deliveryMs: Milliseconds;
}

/**
 * The link a PD deployment's KV crosses from a prefill server to a decode server (src/engine/disaggregation/
 * kv-transfer-link.ts): its bandwidth, shared by the transfers in flight, and a fixed latency per transfer.
 */
export interface KvTransferProfile {
  bandwidthBytesPerSecond: number;
  latencyMs: Milliseconds;
}

/**
 * How a calibrated server schedules, as calibration identified it: the twin takes these as its scheduler settings
 * unless a run sets them itself (and then says where a setting contradicts them).
 */
export interface ProfileScheduling {
  /** Prefill chunks share steps with decoding (SGLang's --enable-mixed-chunk, transformers' continuous batching). */
  mixedChunk: boolean;
  /** Prompt tokens one step takes (with mixing: decode tokens and prompt chunks together). */
  chunkedPrefillSize: number;
  maxRunningRequests: number;
  maxTotalTokens: number;
  /** KV tokens per page (`page_size` in /server_info); absent in profiles from before it was read: 1. */
  pageSize?: number;
  /** Where the limits came from: the server's own /server_info, or probed (absent there: defaults or a probe). */
  source: 'server_info' | 'probed';
  /** What the probe saw, in words, so that a reader can judge the verdict. */
  evidence?: string;
}

/** A closed range of a quantity a calibration measured steps over. */
export type MeasuredRange = [number, number];

/**
 * The region of step shapes a profile was measured over: outside it the profile is extrapolating, and the twin counts
 * and reports the steps it simulates there.
 */
export interface ProfileRegion {
  /** Sequences decoding in one step (decode and mixed steps). */
  decodeSequences: MeasuredRange;
  /** Prompt tokens prefilled in one step. */
  prefillTokens: MeasuredRange;
  /** KV tokens a step's decoding sequences read. */
  kvTokens: MeasuredRange;
  /** Mixed steps (decode and prefill together): the batch sizes and prompt tokens measured; null when none were. */
  mixedSteps: { decodeSequences: MeasuredRange; prefillTokens: MeasuredRange } | null;
}

/**
 * `within target`: |error| within the target (15%); `within noise`: outside the target, but the twin's value lies inside
 * the server run's own 95% bootstrap interval over its requests, so a run of that length cannot tell the twin from the
 * server; `miss`: neither (a metric without an interval, throughput, misses whenever it is outside the target).
 */
export type ValidationVerdict = 'within target' | 'within noise' | 'miss';

export interface ValidationMetricVerdict {
  verdict: ValidationVerdict;
  /**
   * The server run's 95% bootstrap interval over its requests for this metric, as signed percent of its estimate
   * (docs/statistics.md); absent where the run has none (throughput: one run, one value).
   */
  noiseLowPercent?: number;
  noiseHighPercent?: number;
}

/** The twin against the server under an open-loop load, as calibrate's validation measured it (signed percent). */
export interface ProfileValidation {
  /** When and how: the workload, rates and seed. */
  description: string;
  rates: {
    requestRate: number;
    throughputErrorPercent: number;
    ttftP50ErrorPercent: number;
    ttftP90ErrorPercent: number;
    tpotP50ErrorPercent: number;
    e2eP50ErrorPercent: number;
    e2eP90ErrorPercent: number;
    /**
     * Each metric's verdict against the target, weighed with the server run's own sampling noise. Absent in profiles
     * validated before servelab weighed it.
     */
    verdicts?: Record<'throughput' | 'ttftP50' | 'ttftP90' | 'tpotP50' | 'e2eP50' | 'e2eP90', ValidationMetricVerdict>;
  }[];
  /** The largest absolute error over every rate and metric. */
  worstErrorPercent: number;
  /** The root mean square of the errors over every rate and metric: what the recommendation goes by. */
  rmsErrorPercent?: number;
}

/** How far the profile's step times were off the steps calibrate measured (percent of the measured step time). */
export interface ProfileStepError {
  /** Over every measured step (a measured table's is near 0: it passes through its points). */
  fitRmsPercent: number;
  fitMaxPercent: number;
  /** Over the steps held out of a fit made without them: the error met between points; null when none could be held out. */
  heldOutRmsPercent: number | null;
  heldOutMaxPercent: number | null;
  heldOutSteps: number;
}

/** What calibration adds to a roofline or measured profile. */
export interface CalibratedProfileParts {
  scheduling?: ProfileScheduling;
  region?: ProfileRegion;
  validation?: ProfileValidation;
  stepError?: ProfileStepError;
}

/** Every step lasts exactly `stepMs`: for tests with exact timing expectations. */
export interface SimpleProfile {
  kind: 'simple';
  name?: string;
  stepMs: Milliseconds;
  maxTotalTokens?: number;
  contextLength?: number;
  /** PD: KV bytes per token and the KV link (defaults: src/engine/disaggregation/pd-settings.ts). */
  kvBytesPerToken?: number;
  kvTransfer?: KvTransferProfile;
}

/** A model on a GPU, with coefficients and the derivation that justifies them. */
export interface RooflineProfile {
  kind: 'roofline';
  name: string;
  description: string;
  model: string;
  hardware: string;
  /** How each coefficient was derived, in prose, one entry per line. */
  derivation: string[];
  coefficients: RooflineCoefficients;
  /** Default KV capacity in tokens when the server is not told one. */
  maxTotalTokens: number;
  contextLength: number;
  kvBytesPerToken?: number;
  kvTransfer?: KvTransferProfile;
  /** Memory of one GPU as torch reports it (MiB): SGLang's automatic chunk size and memory fraction follow from it. */
  gpuMemoryMiB?: number;
  /** Tensor-parallel GPUs per server. */
  tpSize?: number;
  servingLatency?: ServingLatency;
  scheduling?: ProfileScheduling;
  region?: ProfileRegion;
  validation?: ProfileValidation;
  stepError?: ProfileStepError;
}

/**
 * Step times measured on a real engine, on a grid over what a step does: `stepMs[i][j][k]` is the step time with
 * `decodeSequences[i]` sequences decoding, `prefillTokens[j]` prompt tokens prefilled and `kvTokens[k]` KV tokens read
 * by the decoding sequences. Between grid points the time is interpolated linearly along each axis; past an axis's
 * last point it is extrapolated along the last segment.
 */
export interface MeasuredStepTable {
  decodeSequences: number[];
  prefillTokens: number[];
  kvTokens: number[];
  stepMs: number[][][];
  /**
   * 'step': a mixed step's prompt part is priced at the step's own tokens, its prompt tokens plus one per decoding
   * sequence, read off the prefill row (prefill 0 decode, 0 KV), and the cell holds the rest. An engine that pads a
   * step's tokens to a captured shape pays the padding on all of them: transformers' continuous batching ran a
   * 512-token prompt beside one decoding request (513 tokens) at its 544-token prefill's cost, 60 ms against 44 ms
   * (bench/real-engine/results). 'prompt' (or absent, as in tables written before it): the prompt tokens alone.
   */
  mixedPrefillTokens?: 'prompt' | 'step';
}

/** A profile read off a calibration sweep instead of a formula: for engines the roofline form does not describe. */
export interface MeasuredProfile {
  kind: 'measured';
  name: string;
  description: string;
  model: string;
  hardware: string;
  derivation: string[];
  table: MeasuredStepTable;
  /**
   * The fitted roofline form of the same calibration: past the table's last point on an axis, the step is the table's
   * edge plus what this form adds from the edge to the step, instead of the table's last segment carried on.
   */
  fallback?: RooflineCoefficients;
  maxTotalTokens: number;
  contextLength: number;
  kvBytesPerToken?: number;
  kvTransfer?: KvTransferProfile;
  servingLatency?: ServingLatency;
  scheduling?: ProfileScheduling;
  region?: ProfileRegion;
  validation?: ProfileValidation;
  stepError?: ProfileStepError;
}

export type EngineProfile = SimpleProfile | RooflineProfile | MeasuredProfile;

/** What one scheduling step does, as the cost model sees it. */
export interface StepWork {
  /** Prompt tokens computed in this step (cached tokens excluded). */
  prefillTokens: number;
  /** Sum over prefill chunks of c * (p + (c + 1) / 2). */
  prefillAttentionPairs: number;
  /** Sequences decoding one token each. */
  decodeSequences: number;
  /** KV tokens those sequences read. */
  decodeKvTokens: number;
}

export interface CostModel {
  stepDurationMs(work: StepWork): Milliseconds;
}

/** A request handed to the engine. */
export interface EngineRequestInput {
  id: string;
  promptTokenIds: ArrayLike<number>;
  maxNewTokens: number;
  /** Set as the view's driverData before any listener call can see the request. */
  driverData?: unknown;
  /**
   * Prefill/decode disaggregation, on a decode server: the prompt's KV arrived from a prefill server together with its
   * first token, into KV space reserved earlier (SimEngine.reserveKv). The request joins the running batch at the next
   * step without a prefill forward (SGLang's prebuilt batch), its first token emitted then; `receivedMs` is when the
   * decode server received it (it enters the engine only once the KV has arrived).
   */
  prebuilt?: { receivedMs: Milliseconds; cachedTokens: number };
}

/** Why a request finished, in SGLang's `finish_reason` shape. */
export type EngineFinishReason =
  | { type: 'length'; length: number }
  | { type: 'stop'; matched: number | string | null }
  | { type: 'abort'; message: string; status_code?: number; err_type?: string };

/** The read-only view of a request that drivers and policies see. All times are monotonic milliseconds. */
export interface EngineRequestView {
  readonly id: string;
  /** Order of submission, from 0; a stable tie-breaker. */
  readonly serial: number;
  readonly promptTokenIds: ArrayLike<number>;
  readonly promptLength: number;
  readonly maxNewTokens: number;
  readonly outputTokens: number;
  /** Prompt tokens found in the prefix cache at the (last) admission. */
  readonly cachedTokens: number;
  readonly numRetractions: number;
  readonly receivedMs: Milliseconds;
  /** Entered the waiting queue (SGLang `wait_queue_entry_time`), first time. */
  readonly queueEntryMs: Milliseconds;
  /** Left the queue into its first prefill batch (`forward_entry_time`); NaN until then. */
  readonly forwardEntryMs: Milliseconds;
  /** First token ready (`prefill_finished_time`); NaN until then. */
  readonly prefillFinishedMs: Milliseconds;
  readonly finishedMs: Milliseconds;
  readonly finishReason: EngineFinishReason | null;
  /** The id of the i-th generated token (deterministic from the seed and the request's serial). */
  outputTokenId(index: number): number;
  /** A slot the driver may use to find its own state for this request without a map lookup. */
  driverData: unknown;
}

/** Receives the engine's results. Calls happen inside `completeStep` (or `submit`/`abort` for immediate outcomes). */
export interface EngineListener {
  /** One generated token for `request`, ready at `timeMs`. */
  onToken(request: EngineRequestView, timeMs: Milliseconds): void;
  /** The request is done (length, abort or rejection); no more calls for it follow. */
  onFinish(request: EngineRequestView, timeMs: Milliseconds): void;
}

/** What the prefix cache offers the scheduler. */
export interface PrefixMatch {
  /** Tokens of the sequence already in the cache. */
  length: number;
}

/** A snapshot of the engine's load, for `/metrics`, `/server_info` and routers. */
export interface EngineLoad {
  runningRequests: number;
  waitingRequests: number;
  /** Tokens the waiting requests (and the rest of a chunked prefill) still need in KV: SGLang's pending tokens. */
  waitingTokens: number;
  /**
   * Of those, the ones not served from the prefix cache (`num_waiting_uncached_tokens`). The simulated engine does not
   * match waiting requests against the cache for this (matching would touch its LRU clock), so it reports them all.
   */
  waitingUncachedTokens: number;
  /** KV tokens held by running requests and the cache (excluding evictable cached tokens). */
  usedTokens: number;
  evictableTokens: number;
  maxTotalTokens: number;
  /** used / max, SGLang's `token_usage`. */
  tokenUsage: number;
}

/** Counters that only grow, for throughput and hit-rate gauges. */
export interface EngineCounters {
  promptTokens: number;
  cachedPromptTokens: number;
  prefilledTokens: number;
  generatedTokens: number;
  finishedRequests: number;
  retractions: number;
  steps: number;
  prefillSteps: number;
  decodeSteps: number;
}

/**
 * A waiting-queue ordering. `order` sorts `waiting` in place before each prefill admission; `prefixLength` asks the
 * radix cache how many leading tokens of a request are cached (0 when the cache is off).
 *
 * A custom policy is a module whose default export (or named export `policy`) is an object with this shape, or a
 * function returning one.
 */
export interface SchedulingPolicy {
  readonly name: string;
  order(waiting: EngineRequestView[], context: SchedulingContext): void;
}

export interface SchedulingContext {
  nowMs: Milliseconds;
  prefixLength(request: EngineRequestView): number;
  runningRequests: number;
}
