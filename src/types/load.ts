import type { Clock } from './clock.js';
import type { ProtocolClient } from './client.js';
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
  /** Sent first, one after another, and awaited; recorded in `warmupRecords`, never in `records`. */
  warmupRequests: WorkloadRequest[];
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
  /** Request ids are `${prefix}${index}` (warmup: `${prefix}warmup-${index}`); default a random per-run prefix. */
  requestIdPrefix?: string;
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
}
