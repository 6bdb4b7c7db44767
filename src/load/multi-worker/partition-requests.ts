import type { WorkloadRequest } from '../../types/workload.js';

/** One worker's share of a workload. */
export interface WorkloadShare {
  requests: WorkloadRequest[];
  arrivalOffsetsMs: Float64Array;
  /** Each request's index in the whole workload. */
  requestIndices: Float64Array;
}

/**
 * Deals the requests round robin: worker w takes the requests i with i % workerCount == w, keeping their offsets.
 * Round robin rather than contiguous blocks, so that every worker spreads over the whole schedule and each carries
 * about 1 / workerCount of the rate at every moment (blocks would leave all but one worker idle at any time).
 */
export function partitionRoundRobin(
  requests: readonly WorkloadRequest[],
  arrivalOffsetsMs: Float64Array,
  workerCount: number,
): WorkloadShare[] {
  const shares: WorkloadShare[] = [];
  for (let worker = 0; worker < workerCount; worker++) {
    const count = requests.length > worker ? Math.ceil((requests.length - worker) / workerCount) : 0;
    const share: WorkloadShare = {
      requests: new Array<WorkloadRequest>(count),
      arrivalOffsetsMs: new Float64Array(count),
      requestIndices: new Float64Array(count),
    };
    for (let local = 0, index = worker; index < requests.length; local++, index += workerCount) {
      share.requests[local] = requests[index] as WorkloadRequest;
      share.arrivalOffsetsMs[local] = arrivalOffsetsMs[index] as number;
      share.requestIndices[local] = index;
    }
    shares.push(share);
  }
  return shares;
}

/** Splits a cap (concurrency, connections) over the workers so that the shares add up to it (each at least 1). */
export function splitCap(cap: number, workerCount: number, worker: number): number {
  return Math.max(1, Math.floor(cap / workerCount) + (worker < cap % workerCount ? 1 : 0));
}
