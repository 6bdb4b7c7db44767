import type { ClockOffsetEstimate } from './clock-offset.js';
import type { EpochSeconds, Seconds } from './time.js';
import type { HarnessReport } from './harness.js';
import type { LoadVerdict } from './verdict.js';
import type { PdRole } from './run.js';

/**
 * The snake_case names of the derived columns (docs/metrics.md). They are the column names of `requests.csv` and the keys of
 * `Summary.latencies`, because existing analysis scripts read them.
 */
export type DerivedColumnName =
  | 'total_latency'
  | 'server_latency'
  | 'ttft'
  | 'server_ttft'
  | 'queue_time_in_router'
  | 'network_time'
  | 'tokenize_time'
  | 'pure_queue_time'
  | 'queue_time_in_server'
  | 'prefill_time'
  | 'decode_time'
  | 'tpot'
  | 'send_lag'
  | 'intended_latency';

/**
 * Distribution of one metric. Percentiles use linear interpolation between closest ranks (numpy's default), `std` is
 * the population standard deviation (numpy's default `ddof=0`). Units are those of the metric (seconds for latencies).
 */
export interface Statistics {
  count: number;
  mean: number;
  std: number;
  min: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  max: number;
}

/** Service-level objectives for goodput, in milliseconds. A request is good when it meets every objective given. */
export interface SloTargets {
  ttftMs?: number;
  tpotMs?: number;
  totalMs?: number;
}

export interface SummaryCounts {
  total: number;
  succeeded: number;
  failed: number;
  /** Failed requests per error class (`unknown` when a failed record carries no class). */
  failedByClass: Record<string, number>;
}

/** Why requests of one error class failed. */
export interface ErrorClassSummary {
  /** The error class (`unknown` when a failed record carries none). */
  class: string;
  count: number;
  /** The most common `errorMessage` of the class, cut to its first 200 characters; null when none had a message. */
  topMessage: string | null;
  /** How many failed requests of the class carried that message. */
  topMessageCount: number;
}

export interface SummaryThroughput {
  requestsPerSecond: number;
  inputTokensPerSecond: number;
  outputTokensPerSecond: number;
  totalTokensPerSecond: number;
}

export interface SummaryTokens {
  /** Prompt tokens of succeeded requests (server-reported, else intended). */
  totalInput: number;
  /** Output tokens of succeeded requests (server-reported). */
  totalOutput: number;
  /** Server-reported cached prompt tokens of succeeded requests. */
  totalCached: number;
}

/** How well the load generator produced the load it was asked for. */
export interface OfferedLoad {
  /**
   * Requests per second asked for; `Infinity` means all at once; null when the run has no single target rate (trace
   * replay, closed loop, staged load: `run.info.requestRate` is NaN).
   */
  targetRate: number | null;
  /**
   * Rate of the realised arrival schedule: (requests − 1) / (last scheduled − first scheduled). A short Poisson run
   * draws a schedule whose rate differs from the target by chance; this separates that from the pacer's own error.
   * Null with fewer than two requests or when every request was scheduled at one instant.
   */
  scheduledRate: number | null;
  /** (arrivals - 1) / (last arrival - first arrival); null with fewer than two arrivals. */
  achievedRate: number | null;
  /** achievedRate / targetRate; null when either is unknown or the target is infinite. */
  achievedToTargetRatio: number | null;
  /** Coefficient of variation (std/mean) of the gaps between consecutive arrivals; 1 for a Poisson process. */
  interArrivalCv: number | null;
  /** Statistics of `send_lag` over every request that was sent (seconds). */
  sendLag: Statistics | null;
  /** Load held back by `maxConcurrency`: requests that waited for a free slot before they could be sent. */
  heldForConcurrency: HeldLoad;
}

/** Requests the load generator held back under `maxConcurrency` (records with `heldForConcurrency`). */
export interface HeldLoad {
  /** Requests held back. */
  count: number;
  /** count / all requests (0 for an empty run). */
  share: number;
  /** Statistics of the hold, `dispatch_time − scheduled_time` (seconds), over held requests with a dispatch time. */
  holdSeconds: Statistics | null;
}

/** Number of requests in one stage of their lifecycle over time, reconstructed from the records. */
export interface StageConcurrency {
  /** Highest number of requests in the stage at once. */
  peak: number;
  /** Time-weighted mean number of requests in the stage over the analysis window. */
  timeWeightedMean: number;
  /** Requests that entered the stage per second over the analysis window. */
  entryRate: number;
  /** Mean time spent in the stage (seconds), over the requests whose stage has both ends. */
  meanResidenceSeconds: number | null;
  /** Little's law over the steady window of the run: can fail (see LittlesLawCheck). */
  littlesLaw: LittlesLawCheck;
}

/**
 * Little's law (L = λW) checked over a steady-state window: the middle of the arrival period, leaving out the ramp-up
 * (first 10% of it) and the drain (last 10%, and everything after the last arrival). L is the time-averaged count in
 * the window; λ the entries into the stage inside the window per second; W the mean full residence of those entries
 * (including time after the window). Over a window holding every interval whole this would be an identity; over a
 * steady window it is not: it fails when the stage was not in steady state (a queue that grew or drained across the
 * window) or when timestamps are inconsistent (a shifted clock reading makes some residence far longer than the time
 * it actually occupied the window).
 */
export interface LittlesLawCheck {
  verdict: 'pass' | 'fail' | 'not_checked';
  /** Why it was not checked (too few entries, a window too short for the residence times); null when checked. */
  reason: string | null;
  /** The steady window (epoch seconds); null when the run has no arrival period. */
  windowStart: number | null;
  windowEnd: number | null;
  /** L, λ, W over the window; null when not computable. */
  timeWeightedMean: number | null;
  entryRate: number | null;
  meanResidenceSeconds: number | null;
  /** λ × W. */
  prediction: number | null;
  /** |λW − L| / L. */
  relativeError: number | null;
  /** The largest relative error that passes. */
  tolerance: number;
}

export type ConcurrencyStage = 'in_system' | 'in_router' | 'waiting_in_server_queue' | 'running';

export interface SummaryConcurrency {
  /** SGLang bench_serving's definition: the sum of end-to-end latencies of succeeded requests over the duration. */
  benchServing: number;
  /** Per stage, from the time series (absent when the analysis had no records with the stage's timestamps). */
  stages?: Partial<Record<ConcurrencyStage, StageConcurrency>>;
}

export interface Goodput {
  slo: SloTargets;
  /** Succeeded requests that met every objective given. */
  goodRequests: number;
  /** goodRequests / duration. */
  requestsPerSecond: number;
  /** goodRequests / all requests. */
  fraction: number;
}

/** Per-server view of a routing test (record.host). */
export interface NodeSummary {
  /** The node index `--failure-schedule` uses for this server; null when the run does not list its servers. */
  node: number | null;
  host: string;
  /** The machine its server ran on by name (a Slurm node), when the run placed servers on named machines. */
  placedOn?: string;
  requests: number;
  succeeded: number;
  failed: number;
  /** This node's requests / all requests with a known host. */
  share: number;
  /** Cached prompt tokens / prompt tokens of its succeeded requests; null when no prompt tokens are known. */
  cacheHitRatio: number | null;
  ttft: Statistics | null;
  totalLatency: Statistics | null;
  queueTimeInServer: Statistics | null;
  pureQueueTime: Statistics | null;
  /** Peak and time-weighted mean of requests in flight on this node (router send to finish). */
  peakInFlight: number;
  meanInFlight: number;
}

export interface RoutingSummary {
  nodes: NodeSummary[];
  /** max(requests per node) / mean(requests per node). 1 is perfectly even. */
  imbalanceMaxOverMean: number;
  /** Coefficient of variation of requests per node. 0 is perfectly even. */
  imbalanceCv: number;
  /**
   * Shared-prefix workloads: over prefix groups, the share of each group's requests sent to the node it used most
   * (1 = every group always went to one node, what cache-aware routing aims for). Null without prefix groups.
   */
  prefixGroupAffinity: { meanShareOnTopNode: number; minShareOnTopNode: number; groups: number } | null;
}

/** Load around a time window: what the report compares before and after a failure event. */
export interface WindowLoad {
  /** Window bounds (epoch seconds; subtract `run.t0` of summary.json for seconds after t0). */
  from: EpochSeconds;
  to: EpochSeconds;
  /** Successful completions (by finish time) per second. */
  completionsPerSecond: number;
  /** Failures per second, by failure time: the finish time (when the client saw the failure), else the arrival time. */
  failuresPerSecond: number;
  /** Median TTFT (seconds) of succeeded requests that arrived in the window; null when none did. */
  ttftP50: number | null;
}

/** How the run behaved around one event of `run.events` (docs/metrics.md, Events). */
export interface EventImpact {
  /** Epoch seconds, like every time inside `Summary`. */
  time: EpochSeconds;
  /** The same instant in seconds after the run's t0: the `time` of the matching entry of summary.json's `events`. */
  timeSinceT0: Seconds;
  kind: string;
  /** The node index `--failure-schedule` uses. */
  node?: number;
  /** Prefill/decode disaggregation: the node's role, as its event names it. */
  role?: PdRole;
  /** The node's URL (as in nodes.csv), when the run lists its servers. */
  nodeUrl?: string;
  /**
   * `node`: windows, failures and recovery count only the requests this node served or was chosen for; `cluster`:
   * every request of the run (an event on no node, or a run that does not say which server is which node).
   */
  attribution: 'node' | 'cluster';
  /** Node events: failures in the same span that named no server (refused before the router chose one). */
  unattributedFailures?: number;
  /** Why the baseline (`before`) is empty, when it is. */
  baselineNote?: string;
  before: WindowLoad;
  after: WindowLoad;
  /**
   * Requests that failed (by failure time) between this event and the next one (node events: the node's next event;
   * or the end), wherever they arrived; node events count only that node's requests.
   */
  failuresUntilNextEvent: number;
  /** Seconds from the event to the last such failure: how long errors went on. Null when none failed. */
  errorsStoppedAfterSeconds: number | null;
  /**
   * Restore events: seconds from the restore until error rate and median TTFT were back to their level before the
   * failure (analysis/recovery.ts says exactly how); null when the run never got back to it.
   */
  recoverySeconds?: number | null;
  /** Restore events: the rule behind `recoverySeconds`, in words. */
  recoveryRule?: string;
  /**
   * Restore events whose recovery cannot be judged (the failure came in the ramp-up: no baseline; or there was no
   * failure to undo): why. `recoverySeconds` is then null, and means "not judged", not "not back to normal".
   */
  recoveryNote?: string;
  /**
   * Hang events: the requests sent to the stopped server that waited for it to resume (`serverStallSeconds`, left out
   * of their network_time), and how long they waited. Absent when none did.
   */
  stalls?: { requests: number; stallSeconds: Statistics };
}

/**
 * Per-experiment metrics (docs/metrics.md). Every duration is in seconds. Every instant is epoch seconds (`*Time`, `time`,
 * `from`, `to`) except the fields named `*SinceT0`, which are seconds after the run's t0 like the files' times.
 */
export interface Summary {
  /**
   * Whether the offered load was sustainable (stable, saturated, unknown) with its evidence (docs/metrics.md,
   * "Verdict"). First, because it says how to read everything after it. Absent only in a summary.json written before
   * servelab judged its load.
   */
  verdict: LoadVerdict;
  /**
   * Whether servelab's own processes or the host could have shaped the numbers (clean / suspect, with warnings naming
   * the process and the columns it affects; docs/metrics.md, "Harness"). Absent in virtual time and in runs that did
   * not watch themselves.
   */
  harness?: HarnessReport;
  counts: SummaryCounts;
  /** Per error class, most failures first: the count and the most common message. Empty when nothing failed. */
  errors: ErrorClassSummary[];
  /** First arrival (client) of any request, epoch seconds; null when no request was sent. */
  firstArrivalTime: EpochSeconds | null;
  /** Last finish (client) of any request, epoch seconds; null when none finished. */
  lastFinishTime: EpochSeconds | null;
  /** firstArrivalTime in seconds after the run's t0 (the time base of requests.csv); null when unknown. */
  firstArrivalSinceT0: Seconds | null;
  /** lastFinishTime in seconds after the run's t0; null when unknown. */
  lastFinishSinceT0: Seconds | null;
  /** lastFinishTime − firstArrivalTime (0 when unknown). */
  durationSeconds: Seconds;
  throughput: SummaryThroughput;
  tokens: SummaryTokens;
  /** Statistics of every derived column over succeeded requests (send_lag over every sent request). */
  latencies: Record<DerivedColumnName, Statistics | null>;
  /** Inter-token latencies of every succeeded request pooled together (seconds). */
  interTokenLatency: Statistics | null;
  offeredLoad: OfferedLoad;
  concurrency: SummaryConcurrency;
  goodput: Goodput | null;
  /** Present for routing tests (or whenever records name more than one host). */
  routing?: RoutingSummary;
  /** One entry per run event (node failures, restores), in time order; absent when the run had none. */
  events?: EventImpact[];
  /**
   * How precise the headline percentiles are: the values each p99 rests on and bootstrap intervals over the requests
   * (docs/statistics.md). Absent in a summary.json written before servelab stated it.
   */
  precision?: RunPrecision;
  /** What servers reported that could not be true and was left empty (src/analysis/data-quality.ts). */
  dataQuality: DataQualitySummary;
  /**
   * Per server: its clock's offset against the client's, bounded by the run's own requests, and whether the files'
   * server instants were corrected by it (docs/metrics.md, "Clocks"). Absent in virtual time (one clock).
   */
  clockOffsets?: ClockOffsetEstimate[];
  /** Prefill/decode disaggregation: present when records name their prefill and decode servers (src/analysis/pd-analysis.ts). */
  pd?: PdSummary;
}

/** The PD phase columns, in their order in a request's life. */
export type PdPhaseColumn = 'prefill_queue_time' | 'prefill_forward_time' | 'kv_transfer_time' | 'decode_queue_time';

/** One prefill server (its requests' prefill-side phases) or one decode server (its decode-side phase and latencies). */
export interface PdNodeRow {
  host: string;
  /** Requests this server took in its role (succeeded and failed). */
  requests: number;
  failed: number;
  /** Share of the run's PD requests. */
  share: number;
  /** Prefill servers: statistics of their requests' phases (null: no request has the column, e.g. the sim before it models phases). */
  prefillQueueTimeSeconds?: Statistics | null;
  prefillForwardTimeSeconds?: Statistics | null;
  kvTransferTimeSeconds?: Statistics | null;
  /** Decode servers. */
  decodeQueueTimeSeconds?: Statistics | null;
  ttftSeconds?: Statistics | null;
  tpotSeconds?: Statistics | null;
}

/** How many requests one (prefill, decode) pair served. */
export interface PdPairRow {
  prefillHost: string;
  decodeHost: string;
  requests: number;
  share: number;
}

/** How evenly the requests spread over every possible pair (prefill servers × decode servers seen in the run). */
export interface PdPairBalance {
  pairsPossible: number;
  pairsUsed: number;
  /** The busiest pair's requests over the mean per possible pair (1: perfectly even). */
  maxOverMean: number;
  /** Coefficient of variation of the requests per possible pair (0: perfectly even); null with one pair. */
  coefficientOfVariation: number | null;
}

/**
 * The phases of the requests whose TTFT lies around one percentile: which one dominates TTFT there. `restOfTtft` is
 * what the phases do not cover (client and router hops, bootstrap before the queue, the first decode step).
 */
export interface PdPhaseBreakdownRow {
  percentile: number;
  /** TTFT at that percentile over the requests with every phase. */
  ttftSeconds: number;
  /** The requests averaged: those whose TTFT rank lies within the band around the percentile. */
  requests: number;
  /** The band, in percentiles. */
  fromPercentile: number;
  toPercentile: number;
  /** Mean seconds of each phase in the band, and of the rest of TTFT (negative when the phases sum past TTFT). */
  meanSeconds: Record<PdPhaseColumn | 'rest_of_ttft', number>;
  /** The largest of the four phases and the rest. */
  dominant: PdPhaseColumn | 'rest_of_ttft';
  /** Its share of the band's mean TTFT. */
  dominantShare: number;
}

/** KV transfers of the requests that arrived in one time bin. */
export interface PdTransferBin {
  startSinceT0Seconds: number;
  endSinceT0Seconds: number;
  requests: number;
  kvTransferTimeSeconds: Statistics | null;
  /** Prompt tokens whose KV cache moved, per second of the bin (the whole prompt moves: decode keeps no radix cache). */
  transferredTokensPerSecond: number;
}

export interface PdSummary {
  prefillNodes: PdNodeRow[];
  decodeNodes: PdNodeRow[];
  pairs: PdPairRow[];
  pairBalance: PdPairBalance;
  /** Absent when no request has all four phase columns: nothing is said rather than zeros. */
  phasesByTtftPercentile?: PdPhaseBreakdownRow[];
  /** Absent when no request has kv_transfer_time. */
  kvTransferOverTime?: PdTransferBin[];
  /**
   * Each PD stage over the run's succeeded PD requests (seconds; null where no request has it): the rows the latency
   * tables show for a PD run in place of the decode server's misleading tokenize and prefill. Absent in a summary.json
   * written before servelab computed them.
   */
  stages?: Record<PdStageColumn, Statistics | null>;
}

/** The PD stage columns the latency tables show: the four phases and the decode server's wait for the transfer. */
export type PdStageColumn = PdPhaseColumn | 'kv_transfer_wait_time';

/** One Kolmogorov–Smirnov test of a run's inter-arrival gaps against its arrival process's law (src/analysis/sent-process.ts). */
export interface GapLawTest {
  /**
   * Whose instants: `scheduled` (scheduled_time), `sent` (arrival_time, the client's first byte), `router`
   * (router_send_time, a routing test's tap) or `server` (server_created_time, the server's receipt, on the client's
   * clock where clocks were corrected).
   */
  source: 'scheduled' | 'sent' | 'router' | 'server';
  /** Gaps tested: consecutive instants of every request that has one, in time order. */
  gaps: number;
  /** The KS distance D. */
  statistic: number;
  pValue: number;
  /** pValue at or above the report's significance. */
  passed: boolean;
}

/**
 * How far the instants actually sent (and received) depart from the scheduled arrival process: docs/metrics.md,
 * "Sent process". Present for real-time open-loop runs.
 */
export interface SentProcessReport {
  /** The law every source's gaps are tested against, in words ("exponential, rate 400 /s"); null when none is tested. */
  law: string | null;
  /** Why no gap is tested against a law (trace replay, constant or staged arrivals, a cap holding requests back); null when they are. */
  skippedReason: string | null;
  /** The level below which a p-value fails (0.01). */
  significance: number;
  tests: GapLawTest[];
  /** Send lag (arrival − scheduled) of the requests no cap held back, ms; null when none was sent. */
  sendLagMs: { p50: number; p99: number; max: number } | null;
  /**
   * Pairs of requests consecutive in the schedule and at least `scheduledGapMs` apart in it (`pairs`) whose sends came
   * less than `thresholdMs` apart, or in the other order (`clumped`): the client let them out together.
   */
  clumps: { thresholdMs: number; scheduledGapMs: number; pairs: number; clumped: number; share: number };
  /** True when the sent gaps fail the test that the scheduled gaps pass: the load as sent is not the process asked for. */
  departs: boolean;
}

/** The data-quality section of a summary: what was left out, per field and reason. */
export interface DataQualitySummary {
  /** Records that lost at least one field. */
  recordsAffected: number;
  /** `field:reason` → how many records lost that field for that reason. */
  removedFields: Record<string, number>;
  /** How the screening decides, in words (printed beside the counts). */
  rule: string;
  /** What the run's numbers cannot be trusted for though no field was left out (a tokenizer the server does not share, ITL not kept). */
  cautions?: string[];
  /** How far the sent arrival process departs from the scheduled one; absent in virtual time and closed loops (and in files written before it). */
  sentProcess?: SentProcessReport;
}


/**
 * An estimate with its 95% confidence interval (docs/statistics.md). `low`/`high` are null where no interval can be
 * given (one run of a per-run figure such as throughput, or too few values).
 */
export interface IntervalEstimate {
  estimate: number;
  low: number | null;
  high: number | null;
  /**
   * `bootstrap-requests`: the bootstrap over one run's requests; `bootstrap-runs-requests`: the two-level bootstrap
   * (runs, then requests within each); `t-over-runs`: Student's t over per-run values; `none`: no interval.
   */
  method: 'bootstrap-requests' | 'bootstrap-runs-requests' | 't-over-runs' | 'none';
  /** Runs and values (requests, or inter-token gaps for ITL) the estimate rests on. */
  runs: number;
  requests: number;
  /** Bootstrap resamples drawn; null for methods without any. */
  resamples: number | null;
}

/**
 * How precise a single run's percentiles are: for each headline latency, how many values its p99 rests on (and how many
 * of the largest decide it), and bootstrap intervals over its requests for p50, p90 and p99 (docs/statistics.md).
 */
export interface RunPrecision {
  confidence: number;
  /** Bootstrap resamples per interval and the seed they were drawn with (the same records give the same intervals). */
  resamples: number;
  seed: number;
  /** Keyed `ttftSeconds`, `tpotSeconds`, `itlSeconds`, `totalLatencySeconds`: each present when the run has the values. */
  metrics: Record<string, MetricPrecision>;
}

export interface MetricPrecision {
  /** Values the percentiles are taken over (succeeded requests; inter-token gaps for ITL). */
  values: number;
  /** The largest values at or above p99's rank: changing any of them moves p99 (the rest cannot). */
  p99DecidedByTop: number;
  p50: IntervalEstimate;
  p90: IntervalEstimate;
  p99: IntervalEstimate;
}
