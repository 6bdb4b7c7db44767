import type { RequestRecord } from '../types/record.js';
import type { RunEvent } from '../types/run.js';
import type { Seconds } from '../types/time.js';
import { computeStatistics } from './statistics.js';

/** Width of the windows compared after a restore. */
export const RECOVERY_WINDOW_SECONDS = 1;
/** How much slower than before the failure the median TTFT may be and still count as recovered. */
export const RECOVERY_TTFT_TOLERANCE = 1.25;
/** Failed share of requests that always counts as normal (a run with no failures before still has some noise). */
export const RECOVERY_ERROR_SHARE_FLOOR = 0.01;
/** The longest baseline before a failure (seconds). */
export const BASELINE_SECONDS = 10;
/** Failure events that a `restore` undoes. */
const FAILURE_KINDS = new Set(['crash', 'hang', 'drain']);

/** The recovery rule in words, printed beside every recovery time. */
export const RECOVERY_RULE =
  `recovered at the start of the first ${RECOVERY_WINDOW_SECONDS} s window after the restore, counted on the restored node's own requests, ` +
  `whose failed share is no higher than before the failure (or ${RECOVERY_ERROR_SHARE_FLOOR * 100}%) and whose median TTFT is within ` +
  `${Math.round((RECOVERY_TTFT_TOLERANCE - 1) * 100)}% of before, and that stays so in the next window; "before" is the steady ` +
  `${BASELINE_SECONDS} s (at most) before the failure, never earlier than the end of the ramp-up (first arrival + 10% of the arrival period)`;

interface WindowQuality {
  requests: number;
  errorShare: number;
  ttftP50: number | null;
}

/**
 * Requests by arrival time in [from, to): how many, what share failed, and their median TTFT. With `failuresBefore`,
 * a request that failed at or after that instant (its finish time, else its arrival) is left out: it was caught by
 * the failure event, so it is no part of the level before it.
 */
function windowQuality(records: readonly RequestRecord[], from: number, to: number, failuresBefore?: number): WindowQuality {
  let requests = 0;
  let failed = 0;
  const ttfts: number[] = [];
  for (const record of records) {
    const arrival = record.arrivalTime ?? record.scheduledTime;
    if (arrival < from || arrival >= to) continue;
    if (!record.success && failuresBefore !== undefined && (record.finishTime ?? arrival) >= failuresBefore) continue;
    requests++;
    if (!record.success) failed++;
    else if (record.firstTokenTime !== undefined && record.arrivalTime !== undefined) ttfts.push(record.firstTokenTime - record.arrivalTime);
  }
  return { requests, errorShare: requests === 0 ? 0 : failed / requests, ttftP50: computeStatistics(ttfts)?.p50 ?? null };
}

/**
 * Time to recover after a restore (docs/metrics.md, Events), by RECOVERY_RULE: `records` are the restored node's own requests (or the
 * whole run's when the run does not say which node served which). The baseline is the steady window before the
 * failure the restore undoes: at most BASELINE_SECONDS, never before `steadyStart` (the ramp-up is no baseline),
 * leaving out requests that arrived then but failed at or after the failure (the failure caused those). Returns null
 * when the run never got back to normal, or when there is nothing to compare (no failure before the restore, no
 * request in the baseline).
 */
/**
 * Why a restore's recovery cannot be judged, or undefined when it can: no failure before it to undo, or no steady
 * request before that failure to compare with (it fell in the ramp-up, or right at the first arrival). timeToRecover
 * returns null in these cases too, and that null must not read as "not back to normal".
 */
export function recoveryBaselineProblem(
  records: readonly RequestRecord[],
  events: readonly RunEvent[],
  restore: RunEvent,
  steadyStart = Number.NEGATIVE_INFINITY,
): string | undefined {
  const failure = failureUndoneBy(events, restore);
  if (failure === undefined) return `no ${[...FAILURE_KINDS].join(', ')} before this restore${restore.node === undefined ? '' : ` on node ${restore.node}`}: nothing to recover from`;
  const baselineFrom = Math.max(failure.time - BASELINE_SECONDS, steadyStart);
  const during = `the ${failure.kind} came during the ramp-up (before first arrival + 10% of the arrival period)`;
  if (!(baselineFrom < failure.time)) return `no baseline: ${during}, so there is no steady level to be back to`;
  if (windowQuality(records, baselineFrom, failure.time, failure.time).requests === 0) {
    return `no baseline: no request arrived in the steady ${BASELINE_SECONDS} s before the ${failure.kind}, so there is no level to be back to`;
  }
  return undefined;
}

function failureUndoneBy(events: readonly RunEvent[], restore: RunEvent): RunEvent | undefined {
  return [...events]
    .filter((event) => FAILURE_KINDS.has(event.kind) && event.time <= restore.time && (restore.node === undefined || event.node === restore.node))
    .sort((first, second) => second.time - first.time)[0];
}

export function timeToRecover(
  records: readonly RequestRecord[],
  events: readonly RunEvent[],
  restore: RunEvent,
  windowEnd: number,
  steadyStart = Number.NEGATIVE_INFINITY,
): Seconds | null {
  const failure = failureUndoneBy(events, restore);
  if (failure === undefined) return null;
  const baselineFrom = Math.max(failure.time - BASELINE_SECONDS, steadyStart);
  if (!(baselineFrom < failure.time)) return null;
  const baseline = windowQuality(records, baselineFrom, failure.time, failure.time);
  if (baseline.requests === 0) return null;
  const isNormal = (quality: WindowQuality): boolean =>
    quality.requests > 0 &&
    quality.errorShare <= Math.max(baseline.errorShare, RECOVERY_ERROR_SHARE_FLOOR) &&
    (baseline.ttftP50 === null || (quality.ttftP50 !== null && quality.ttftP50 <= baseline.ttftP50 * RECOVERY_TTFT_TOLERANCE));
  for (let start = restore.time; start + RECOVERY_WINDOW_SECONDS <= windowEnd; start += RECOVERY_WINDOW_SECONDS) {
    if (!isNormal(windowQuality(records, start, start + RECOVERY_WINDOW_SECONDS))) continue;
    const next = windowQuality(records, start + RECOVERY_WINDOW_SECONDS, start + 2 * RECOVERY_WINDOW_SECONDS);
    if (next.requests === 0 || isNormal(next)) return start - restore.time;
  }
  return null;
}
