import type { RequestRecord } from '../../types/record.js';
import type { EpochSeconds } from '../../types/time.js';
import type { WorkloadRequest } from '../../types/workload.js';
import { buildRequestRecord } from '../request-record.js';

export interface UnfinishedFacts {
  requestId: string;
  scheduledTime: EpochSeconds;
  /** When its generator was seen to end, on the coordinator's clock: where the failure is placed in time. */
  lostAt: EpochSeconds;
  why: string;
}

/**
 * The record of a request whose load generator ended before delivering its record: `aborted`, as a request cut by an
 * interrupt is, with no send time (the coordinator cannot know whether it was sent) and a message saying so. A failed
 * request is data: the run keeps one record per scheduled request even when a generator dies.
 */
export function unfinishedRecord(workload: WorkloadRequest, facts: UnfinishedFacts): RequestRecord {
  return buildRequestRecord(
    workload,
    { requestId: facts.requestId, warmup: false, scheduledTime: facts.scheduledTime, heldForConcurrency: false },
    { success: false, error: 'aborted', errorMessage: facts.why.slice(0, 300), finishTime: Math.max(facts.lostAt, facts.scheduledTime) },
  );
}
