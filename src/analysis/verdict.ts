import type { RequestRecord } from '../types/record.js';
import type { LoadVerdict } from '../types/verdict.js';

/**
 * The thresholds of the verdict (docs/metrics.md, "Verdict"). A run is saturated when the number of requests in the
 * system (offered and not yet finished) grows through the judged window at a rate of at least min_growth_share of
 * the offered rate, and by at least min_growth_requests and half its level at the window's start over the window:
 * the first condition says arrivals outrun completions, the second that the growth is more than the noise of a
 * stable queue.
 */
export const VERDICT_THRESHOLDS = {
  /** The first share of the arrival span left out: the system fills from empty there even when it is stable. */
  fill_share: 0.2,
  min_growth_share: 0.05,
  min_growth_requests: 10,
  min_growth_of_start_level: 0.5,
} as const;

/** Points at which the in-system count is sampled over the judged window for its trend. */
const TREND_SAMPLES = 64;

/** Sorted copy of finite values. */
function sortedTimes(values: number[]): Float64Array {
  return Float64Array.from(values.filter((value) => Number.isFinite(value))).sort();
}

/** How many of the sorted values are ≤ time (binary search). */
function countUpTo(sorted: Float64Array, time: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((sorted[middle] as number) <= time) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Least-squares slope of y over x. */
function slopeOf(xs: readonly number[], ys: readonly number[]): number {
  const n = xs.length;
  let meanX = 0;
  let meanY = 0;
  for (let index = 0; index < n; index++) {
    meanX += xs[index] as number;
    meanY += ys[index] as number;
  }
  meanX /= n;
  meanY /= n;
  let covariance = 0;
  let variance = 0;
  for (let index = 0; index < n; index++) {
    const dx = (xs[index] as number) - meanX;
    covariance += dx * ((ys[index] as number) - meanY);
    variance += dx * dx;
  }
  return variance > 0 ? covariance / variance : 0;
}

const round = (value: number, digits = 3): number => Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * Whether the offered load was sustainable. Requests enter the system when the load generator meant to send them
 * (`scheduledTime`, so a backlog held in the client counts too) and leave when they finish (a failed request without
 * a finish time leaves when it was sent); requests never sent are left out. Times in the result are seconds after t0.
 */
export function judgeLoad(records: readonly RequestRecord[], t0: number, targetRate: number | null): LoadVerdict {
  const sent = records.filter((record) => !record.warmup && record.arrivalTime !== undefined);
  const enters: number[] = [];
  const leaves: number[] = [];
  for (const record of sent) {
    enters.push(record.scheduledTime);
    const left = record.finishTime ?? (record.success ? undefined : record.arrivalTime);
    if (left !== undefined) leaves.push(left);
  }
  const entered = sortedTimes(enters);
  const left = sortedTimes(leaves);
  const unknown = (reason: string): LoadVerdict => ({ state: 'unknown', reason, evidence: null, thresholds: VERDICT_THRESHOLDS });
  if (entered.length < 2) return unknown('fewer than two requests were sent: nothing to judge');
  const first = entered[0] as number;
  const last = entered[entered.length - 1] as number;
  const lastFinish = left.length > 0 ? (left[left.length - 1] as number) : Number.NaN;
  const inSystemAt = (time: number): number => countUpTo(entered, time) - countUpTo(left, time);
  let peak = 0;
  // The peak is reached just after an arrival.
  for (const time of entered) peak = Math.max(peak, inSystemAt(time));
  const base = {
    in_system_peak: peak,
    drain_after_last_arrival_s: Number.isFinite(lastFinish) ? round(Math.max(0, lastFinish - last), 6) : null,
    unfinished_requests: entered.length - left.length,
  };
  if (!(last > first) || targetRate === Number.POSITIVE_INFINITY) {
    return {
      state: 'saturated',
      reason: `all ${entered.length} requests were offered at once (infinite rate): they queue from the start and the backlog only drains`,
      evidence: { ...base, window_start_s: round(first - t0, 6), window_end_s: round(last - t0, 6), offered_rate_per_s: null, served_rate_per_s: null, served_to_offered_ratio: null, in_system_growth_per_s: null, in_system_growth_over_window: null, in_system_at_window_start: 0, in_system_at_window_end: entered.length },
      thresholds: VERDICT_THRESHOLDS,
    };
  }
  const start = first + VERDICT_THRESHOLDS.fill_share * (last - first);
  const span = last - start;
  const xs: number[] = [];
  const ys: number[] = [];
  for (let index = 0; index < TREND_SAMPLES; index++) {
    const time = start + (span * index) / (TREND_SAMPLES - 1);
    xs.push(time - start);
    ys.push(inSystemAt(time));
  }
  const growthPerSecond = slopeOf(xs, ys);
  const growthOverWindow = growthPerSecond * span;
  const offeredRate = (countUpTo(entered, last) - countUpTo(entered, start)) / span;
  const servedRate = (countUpTo(left, last) - countUpTo(left, start)) / span;
  const atStart = ys[0] as number;
  const atEnd = ys[ys.length - 1] as number;
  const saturated =
    growthPerSecond >= VERDICT_THRESHOLDS.min_growth_share * offeredRate &&
    growthOverWindow >= Math.max(VERDICT_THRESHOLDS.min_growth_requests, VERDICT_THRESHOLDS.min_growth_of_start_level * atStart);
  const rates = `offered ${offeredRate.toFixed(2)} req/s, completed ${servedRate.toFixed(2)} req/s`;
  const trend = `requests in the system ${atStart} -> ${atEnd} over ${span.toFixed(1)} s (trend ${growthPerSecond >= 0 ? '+' : ''}${growthPerSecond.toFixed(2)}/s)`;
  return {
    state: saturated ? 'saturated' : 'stable',
    reason: saturated ? `arrivals outran completions: ${rates}; ${trend}` : `completions kept up with arrivals: ${rates}; ${trend}`,
    evidence: {
      ...base,
      window_start_s: round(start - t0, 6),
      window_end_s: round(last - t0, 6),
      offered_rate_per_s: round(offeredRate),
      served_rate_per_s: round(servedRate),
      served_to_offered_ratio: offeredRate > 0 ? round(servedRate / offeredRate, 4) : null,
      in_system_growth_per_s: round(growthPerSecond),
      in_system_growth_over_window: round(growthOverWindow, 1),
      in_system_at_window_start: atStart,
      in_system_at_window_end: atEnd,
    },
    thresholds: VERDICT_THRESHOLDS,
  };
}

/**
 * The smallest backlog growth, as a share of the offered rate, that this verdict's window could have called
 * saturated: its growth thresholds (min_growth_requests, min_growth_of_start_level x the level at the window's start)
 * over the requests offered in the window. A run is long enough to judge when that share is no more than
 * min_growth_share, the share the verdict itself calls saturation; above it, a STABLE verdict may hide a backlog
 * that grows too slowly for so short a window to show. Null when the verdict has no window (unknown, all at once).
 */
export function smallestDetectableGrowthShare(verdict: LoadVerdict): number | null {
  const evidence = verdict.evidence;
  if (evidence === null || evidence.offered_rate_per_s === null) return null;
  const offeredInWindow = evidence.offered_rate_per_s * (evidence.window_end_s - evidence.window_start_s);
  if (!(offeredInWindow > 0)) return null;
  const thresholds = verdict.thresholds;
  return Math.max(thresholds.min_growth_requests, thresholds.min_growth_of_start_level * evidence.in_system_at_window_start) / offeredInWindow;
}

/** Whether the run was long enough for its verdict to see a backlog growing at min_growth_share of the offered rate. */
export function longEnoughToJudge(verdict: LoadVerdict): boolean {
  const share = smallestDetectableGrowthShare(verdict);
  return share !== null && share <= verdict.thresholds.min_growth_share;
}
