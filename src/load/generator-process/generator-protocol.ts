import type { LoadProgress, ProtocolClientSpec } from '../../types/load.js';
import type { EpochSeconds } from '../../types/time.js';
import type { WorkloadRequest } from '../../types/workload.js';

/**
 * The HTTP protocol between the coordinator (the servelab run) and a load-generator process (`servelab
 * load-generator`), which may run on another host. Every endpoint needs the run's control token (control-auth.ts).
 *
 * - `GET  /_servelab/generator/clock`   one clock exchange: the generator's receive and send stamps (see ClockStamps);
 * - `POST /_servelab/generator/start`   its slice of the one schedule and the common start instant (GeneratorStart);
 * - `GET  /_servelab/generator/records` a server-sent event stream: `record` (one final record, as the generator
 *   measured it, on its own clock), `progress` (LoadProgress), then `done` (GeneratorDone) or `failed`;
 *   `?from=N` starts at the N-th record, so a coordinator that lost the stream can take it up again;
 * - `POST /_servelab/generator/abort`   interrupt: stop sending, abort what is in flight (recorded as `aborted`).
 */
export const GENERATOR_PATHS = {
  clock: '/_servelab/generator/clock',
  start: '/_servelab/generator/start',
  records: '/_servelab/generator/records',
  abort: '/_servelab/generator/abort',
} as const;

/** The one line a generator prints once it listens (the coordinator learns its URL from it: listeningUrl). */
export const GENERATOR_LISTENING_LINE = /servelab load-generator listening on (http:\/\/\S+)/;

/**
 * The generator's answer to one clock exchange, in epoch milliseconds on its own clock: when it received the request
 * (t2) and when it sent the answer (t3). The coordinator keeps its own send (t1) and receive (t4) instants, NTP's four.
 */
export interface ClockStamps {
  receivedEpochMs: number;
  sentEpochMs: number;
  /**
   * The host anchor the generator's clock stamps on (clock.ts clockAnchorOf), when it is a real clock: a generator
   * started on the coordinator's host inherits the coordinator's, and then the offset is exactly zero, not estimated.
   */
  clockAnchor?: string;
}

/**
 * What a generator is given to run: its disjoint slice of the run's one seeded schedule (the requests themselves, so
 * that no dataset file has to exist on its host), and the common start instant on the coordinator's clock with the
 * offset the coordinator measured, which the generator applies to find that instant on its own clock.
 */
export interface GeneratorStart {
  clientSpec: ProtocolClientSpec;
  /** Worker threads inside this generator (`--client-workers`). */
  workers: number;
  requests: WorkloadRequest[];
  /** Each request's instant after t0, as in the whole schedule. */
  arrivalOffsetsMs: number[];
  /** Each request's index in the whole workload: its id is `${requestIdPrefix}${index}`. */
  requestIndices: number[];
  requestIdPrefix: string;
  maxConcurrency?: number;
  /** t0 in epoch milliseconds on the coordinator's clock. */
  startAtCoordinatorEpochMs: number;
  /** This generator's clock minus the coordinator's, in milliseconds, as estimated so far. */
  clockOffsetMs: number;
}

/** The `done` event: the slice finished (or was interrupted); times on the generator's clock. */
export interface GeneratorDone {
  records: number;
  startTime: EpochSeconds;
  endTime: EpochSeconds;
  interrupted: boolean;
}

/** The `failed` event: the generator could not run its slice (its client did not load, say). */
export interface GeneratorFailed {
  message: string;
  code?: string;
}

export type GeneratorProgress = LoadProgress;
