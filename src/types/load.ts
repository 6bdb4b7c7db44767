import type { Clock } from './clock.js';
import type { ClockOffsetModel } from './clock-offset.js';
import type { ProcessPlacement } from './cluster.js';
import type { ProtocolClient, ProtocolClientOptions } from './client.js';
import type { RequestRecord } from './record.js';
import type { EpochSeconds, Milliseconds } from './time.js';
import type { WorkloadRequest } from './workload.js';

/** A snapshot of a load run, for progress displays. */
export interface LoadProgress {
  phase: 'warmup' | 'measured' | 'done';
  /** Measured requests in the workload. */
  total: number;
  /** Measured requests handed to the client so far. */
  sent: number;
  /** Measured requests finished (successfully or not). */
  completed: number;
  failed: number;
  inFlight: number;
  /** Requests whose instant has come but that wait for a slot under `maxConcurrency`. */
  waitingForConcurrency: number;
  /** Time since the schedule origin `t0` (0 during warmup). */
  elapsedMs: Milliseconds;
  /** How far the newest send was behind its scheduled instant. */
  lastSendLagMs: Milliseconds;
}

/**
 * Closed loop: `concurrency` users, each sending its next request when its previous one finished (after an optional
 * think time), so exactly `concurrency` requests are in flight while requests remain. `arrivalOffsetsMs` is ignored.
 */
export interface ClosedLoopMode {
  kind: 'closed';
  /** Users; with `stages`, it is ignored (the stages set it). */
  concurrency: number;
  thinkTimeMs?: Milliseconds;
  /**
   * A user count that changes over time. Users above the current count finish their request and pause; the run
   * stops sending when the last stage ends (or the requests run out).
   */
  stages?: ConcurrencyStage[];
}

export interface ConcurrencyStage {
  durationS: number;
  /** Users at the end of the stage (and throughout it, unless it ramps). */
  concurrency: number;
  /** `linear`: the user count moves evenly from the previous stage's (0 before the first). Default `step`. */
  ramp?: 'step' | 'linear';
}

/** Open loop (the default): each request is sent at `t0 + arrivalOffsetsMs[i]`, whatever is still in flight. */
export interface OpenLoopMode {
  kind: 'open';
}

export type LoadMode = OpenLoopMode | ClosedLoopMode;

export interface RunLoadOptions {
  /** Measured requests, in sending order. */
  requests: WorkloadRequest[];
  /**
   * Sent first, all at once (at most `maxConcurrency` at a time), as SGLang's bench_serving sends its warmups, and
   * awaited; recorded in `warmupRecords` in this order, never in `records`.
   */
  warmupRequests: WorkloadRequest[];
  /**
   * How long one warmup request may take; past it the request is cancelled, recorded as `total_timeout`, and the run
   * goes on (a hung warmup must never block the measured load). Absent: the client's own deadlines only.
   */
  warmupTimeoutMs?: number;
  /** One per measured request: its instant in milliseconds after the schedule origin `t0`. */
  arrivalOffsetsMs: Float64Array;
  /** Cap on requests in flight; an arrival beyond it waits for a slot (and its record says so). */
  maxConcurrency?: number;
  /** Open loop by default. */
  mode?: LoadMode;
  client: ProtocolClient;
  /** A real-time clock: the pacer waits on real timers, so a clock that does not move would never reach an instant. */
  clock: Clock;
  /** Interrupts the run: nothing more is sent, requests in flight are aborted (recorded as `aborted`). */
  signal?: AbortSignal;
  /** Called about four times a second, and once at the end. */
  onProgress?: (progress: LoadProgress) => void;
  /** Called once, when the measured schedule's origin `t0` (epoch seconds, as `LoadResult.startTime`) is set. */
  onStart?: (t0: EpochSeconds) => void;
  /** Called with each measured request's record as soon as it is final, so it can reach disk before the run ends. */
  onRecord?: (record: RequestRecord) => void;
  /** Request ids are `${prefix}${index}` (warmup: `${prefix}warmup-${index}`); default a random per-run prefix. */
  requestIdPrefix?: string;
  /**
   * The schedule origin `t0` as epoch milliseconds (`performance.timeOrigin + performance.now()` on the system clock),
   * instead of "when the warmup ends". Used to give several pacers one start instant. Scheduled times are then exactly
   * `(startAtEpochMs + arrivalOffsetsMs[i]) / 1000`. An origin already past sends the overdue requests at once.
   */
  startAtEpochMs?: number;
  /**
   * One per measured request: its index in the whole workload, used in its request id (`${prefix}${index}`) when
   * this run offers only part of a workload. Default: the position in `requests`.
   */
  requestIndices?: ArrayLike<number>;
}

/** What a worker thread needs to build its own protocol client: everything but the clock (it uses the system clock). */
export interface ProtocolClientSpec {
  /** A built-in protocol name or a module path (as the `protocol` setting). */
  protocol: string;
  options: Omit<ProtocolClientOptions, 'clock'>;
}

/**
 * `runLoadAcrossWorkers`: the options of `runLoad`, spread over `workers` threads, each with its own client built from
 * `clientSpec`. `client` (optional here) sends the warmup requests in the calling thread; without it one is built from
 * `clientSpec` for the warmup. `clock` must be a real-time clock on the epoch (the system clock).
 */
export interface MultiWorkerLoadOptions extends Omit<RunLoadOptions, 'client' | 'requestIndices'> {
  workers: number;
  clientSpec: ProtocolClientSpec;
  client?: ProtocolClient;
  /** How long after every worker is ready the shared start instant comes. Default 300 ms. */
  startLeadMs?: number;
}

/**
 * `runLoadAcrossGenerators`: the options of `runLoad`, spread over `generators` load-generator processes started
 * through `placement` (on `nodes[i % nodes.length]`, else its default node), each with its own client built from
 * `clientSpec` and its own pacer, sharing one schedule and one start instant (docs/load-generators.md). `clock` must be
 * a real-time clock on the epoch: the generators' clocks are measured against it.
 */
export interface GeneratorLoadOptions extends Omit<RunLoadOptions, 'client' | 'requestIndices' | 'startAtEpochMs'> {
  generators: number;
  placement: ProcessPlacement;
  nodes?: readonly string[];
  clientSpec: ProtocolClientSpec;
  /** Sends the warmup requests from this process; without it one is built from `clientSpec`. */
  client?: ProtocolClient;
  /** Where each generator's output goes (`load-generator-<i>.log`); absent: nowhere. */
  logsPath?: string;
  /** How long after every generator is ready and its clock measured the shared start instant comes. Default 1000 ms. */
  startLeadMs?: number;
  /** How long a generator may take to print where it listens. Default 30 s. */
  readyTimeoutMs?: number;
  /** Time between clock exchanges with each generator while the load runs. Default 2000 ms. */
  clockExchangeIntervalMs?: number;
  /**
   * A generator process ended before it finished its slice: called at once (its requests without a record become
   * `aborted` records); the run goes on with the others.
   */
  onGeneratorLost?: (loss: GeneratorLoss) => void;
}

export interface GeneratorLoss {
  /** When its end was seen, on the run's clock. */
  time: EpochSeconds;
  /** `load-generator 1 (node n2)`. */
  generator: string;
  /** How it ended, in words. */
  detail: string;
}

/** One load generator's clock against the coordinator's (generator − coordinator), from the exchanges with it. */
export interface GeneratorClockEstimate {
  /** Milliseconds at the first exchange (positive: the generator's clock is ahead); null before any exchange. */
  offsetMs: number | null;
  /** Half the width of the bounds: at most half the fastest exchange's round trip (ms). */
  uncertaintyMs: number | null;
  /** Drift of the offset in parts per million, when the drift line was the better model; else null. */
  driftPpm: number | null;
  model: ClockOffsetModel | null;
  /** Whether every exchange agrees with the model (false: a clock step mid-run). */
  consistent: boolean;
  exchanges: number;
  /** The fastest exchange's round trip less the generator's own time between its two stamps (ms). */
  bestRoundTripMs: number | null;
  /**
   * The generator stamps on the coordinator's own host anchor (started on the same host, it inherited it: exactly one
   * epoch), so `offsetMs` is 0 by construction, not estimated, and `consistent` says whether every exchange bracketed 0.
   */
  sharedAnchor: boolean;
}

/** What a run with several load-generator processes says about each (summary.json `extras.loadGenerators`). */
export interface LoadGeneratorReport {
  name: string;
  node?: string;
  url: string;
  /** Requests in its slice of the schedule. */
  requests: number;
  /** Records it delivered. */
  recordsReceived: number;
  /** Requests of its slice recorded as `aborted` because it ended before delivering their records. */
  recordsLost: number;
  /** Set when it ended before finishing its slice. */
  lost?: string;
  /** Its clock against the coordinator's; its records' times were moved onto the coordinator's clock by it. */
  clock: GeneratorClockEstimate;
}

export interface LoadResult {
  /**
   * One record per measured request whose instant came, in workload order. After an interrupt, requests whose
   * instant had not come yet have no record.
   */
  records: RequestRecord[];
  warmupRecords: RequestRecord[];
  /** The schedule origin `t0`. */
  startTime: EpochSeconds;
  /** When the last request ended, or when the run stopped after an interrupt. */
  endTime: EpochSeconds;
  interrupted: boolean;
  /** Present when the load ran in separate load-generator processes (`runLoadAcrossGenerators`). */
  loadGenerators?: LoadGeneratorReport[];
}
