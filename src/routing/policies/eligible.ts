import type { WorkerState } from '../../types/routing.js';

/** A worker may take a new request only while healthy and not drained. */
export function isEligible(worker: WorkerState): boolean {
  return worker.healthy && !worker.drained;
}

/**
 * The eligible workers, in the caller's order: `workers` itself when all are (the usual case; a filtered copy per
 * request was about 1 KB of garbage a request over 64 workers).
 */
export function eligibleWorkers(workers: readonly WorkerState[]): readonly WorkerState[] {
  return workers.every(isEligible) ? workers : workers.filter(isEligible);
}

/**
 * The eligible worker with the fewest requests in flight; ties go to the first in `workers` order (as
 * sglang-router's `min_by_key` does), so the choice is deterministic.
 */
export function leastInFlight(workers: readonly WorkerState[]): WorkerState | undefined {
  let best: WorkerState | undefined;
  for (const worker of workers) {
    if (!isEligible(worker)) continue;
    if (best === undefined || worker.inFlight < best.inFlight) best = worker;
  }
  return best;
}
