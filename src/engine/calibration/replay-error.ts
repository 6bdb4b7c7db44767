import { percentileOfSorted } from '../../analysis/statistics.js';
import type { ReplayedRequest } from './replay-run.js';
import type { RunRequest } from './run-records.js';

/**
 * How far a replay is from the run it replays. Two views:
 *
 * - the fit's objective, request by request: the mean squared log ratio of the simulated to the real server-side
 *   time to first token (queue included) plus that of the time per output token. Log ratios weigh a 10% miss on a
 *   20 ms TTFT like one on a 2 s TTFT, so the light-load requests and the saturated ones both count; 1 ms (TTFT) and
 *   0.05 ms (TPOT) are added to both sides so that near-zero figures do not dominate;
 * - the metrics a user compares (`servelab compare`), on the server's side: TTFT p50/p90, TPOT p50, E2E p50/p90 (from
 *   entering the queue to the last token) and throughput (requests over the span from first arrival to last finish).
 */

export interface ReplayMetrics {
  ttftP50Ms: number;
  ttftP90Ms: number;
  tpotP50Ms: number;
  e2eP50Ms: number;
  e2eP90Ms: number;
  throughputRps: number;
}

export const REPLAY_METRIC_NAMES: Record<keyof ReplayMetrics, string> = {
  throughputRps: 'throughput',
  ttftP50Ms: 'TTFT p50',
  ttftP90Ms: 'TTFT p90',
  tpotP50Ms: 'TPOT p50',
  e2eP50Ms: 'E2E p50',
  e2eP90Ms: 'E2E p90',
};

/** The fit's objective for one run (lower is better; 0 when every request matches); Infinity when a request was refused. */
export function replayObjective(real: readonly RunRequest[], replayed: readonly ReplayedRequest[]): number {
  let sum = 0;
  let terms = 0;
  real.forEach((request, index) => {
    const simulated = replayed[index] as ReplayedRequest;
    if (Number.isNaN(simulated.finishedMs)) {
      sum = Number.POSITIVE_INFINITY;
      return;
    }
    const ttft = Math.log((simulated.firstTokenMs - request.queuedMs + 1) / (request.firstTokenMs - request.queuedMs + 1));
    sum += ttft * ttft;
    terms++;
    if (request.outputTokens > 1) {
      const tpot = Math.log((tpotOf(simulated.firstTokenMs, simulated.finishedMs, request.outputTokens) + 0.05) / (tpotOf(request.firstTokenMs, request.finishedMs, request.outputTokens) + 0.05));
      sum += tpot * tpot;
      terms++;
    }
  });
  return terms === 0 ? Number.POSITIVE_INFINITY : sum / terms;
}

function tpotOf(firstTokenMs: number, finishedMs: number, outputTokens: number): number {
  return (finishedMs - firstTokenMs) / (outputTokens - 1);
}

/** The server-side metrics of a run's requests (or of their replay, given the replayed times). */
export function replayMetrics(real: readonly RunRequest[], replayed?: readonly ReplayedRequest[]): ReplayMetrics {
  const times = real.map((request, index) => {
    const simulated = replayed?.[index];
    return simulated === undefined ? request : { ...request, firstTokenMs: simulated.firstTokenMs, finishedMs: simulated.finishedMs };
  });
  const sorted = (values: number[]): number[] => values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  const ttft = sorted(times.map((request) => request.firstTokenMs - request.queuedMs));
  const tpot = sorted(times.filter((request) => request.outputTokens > 1).map((request) => tpotOf(request.firstTokenMs, request.finishedMs, request.outputTokens)));
  const e2e = sorted(times.map((request) => request.finishedMs - request.queuedMs));
  // Reduced, not spread: a run of a million requests would overflow the argument list.
  const firstArrivalMs = times.reduce((first, request) => Math.min(first, request.queuedMs), Number.POSITIVE_INFINITY);
  const lastFinishMs = times.reduce((last, request) => (Number.isFinite(request.finishedMs) ? Math.max(last, request.finishedMs) : last), Number.NEGATIVE_INFINITY);
  return {
    throughputRps: (times.length * 1000) / Math.max(lastFinishMs - firstArrivalMs, 1e-9),
    ttftP50Ms: percentileOfSorted(ttft, 50),
    ttftP90Ms: percentileOfSorted(ttft, 90),
    tpotP50Ms: percentileOfSorted(tpot, 50),
    e2eP50Ms: percentileOfSorted(e2e, 50),
    e2eP90Ms: percentileOfSorted(e2e, 90),
  };
}

/** Signed relative error of each metric of `twin` against `real`, in percent. */
export function metricErrorsPercent(real: ReplayMetrics, twin: ReplayMetrics): ReplayMetrics {
  const error = (key: keyof ReplayMetrics): number => ((twin[key] - real[key]) / real[key]) * 100;
  return {
    throughputRps: error('throughputRps'),
    ttftP50Ms: error('ttftP50Ms'),
    ttftP90Ms: error('ttftP90Ms'),
    tpotP50Ms: error('tpotP50Ms'),
    e2eP50Ms: error('e2eP50Ms'),
    e2eP90Ms: error('e2eP90Ms'),
  };
}

/** The largest absolute metric error, in percent. */
export function worstErrorPercent(errors: ReplayMetrics): number {
  return Math.max(...Object.values(errors).map((value) => Math.abs(value)));
}
