import type { ErrorCode } from '../../errors/servelab-error.js';
import type { LoadProgress, LoadResult, ProtocolClientSpec } from '../../types/load.js';
import type { RequestRecord } from '../../types/record.js';
import type { WorkloadRequest } from '../../types/workload.js';

/** What one load worker thread is given when it starts (`workerData`): its share of the workload and its client. */
export interface LoadWorkerData {
  /** 0-based; the worker takes the requests i with i % workerCount == workerIndex. */
  workerIndex: number;
  workerCount: number;
  clientSpec: ProtocolClientSpec;
  requests: WorkloadRequest[];
  arrivalOffsetsMs: Float64Array;
  /** Each request's index in the whole workload (its id is `${requestIdPrefix}${index}`). */
  requestIndices: Float64Array;
  requestIdPrefix: string;
  maxConcurrency?: number;
  /** Send each finished record back in batches as it finishes (the main thread journals them to disk). */
  streamRecords?: boolean;
}

/** Main thread to worker. */
export type ToLoadWorkerMessage =
  /** Every worker is ready: the schedule origin, in epoch milliseconds (monotonic readings do not cross threads). */
  | { type: 'start'; startAtEpochMs: number }
  /** The run is interrupted: stop sending and abort what is in flight. */
  | { type: 'abort' };

/** Worker to main thread. */
export type FromLoadWorkerMessage =
  /** The worker's client is built and it waits for `start`. */
  | { type: 'ready' }
  | { type: 'progress'; progress: LoadProgress }
  /** Records that became final since the last batch (sent only when the main thread asked for them). */
  | { type: 'records'; records: RequestRecord[] }
  | { type: 'result'; result: LoadResult }
  /** The worker could not run (its client failed to load, say); `code` is kept when it was a ServelabError. */
  | { type: 'error'; message: string; code?: ErrorCode };
