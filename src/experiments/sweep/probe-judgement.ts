import { longEnoughToJudge, smallestDetectableGrowthShare, VERDICT_THRESHOLDS } from '../../analysis/verdict.js';
import type { Summary } from '../../types/summary.js';

/**
 * What one search probe says about its rate. A rate passes only when its run met the objectives AND the verdict
 * judged it STABLE over a window long enough to see a slowly growing backlog (docs/metrics.md, "Verdict"): a short run
 * of a growing queue starts empty and can meet objectives that the same rate misses in steady state.
 *
 * - `pass`: met the objectives, STABLE, long enough to judge.
 * - `fail`: missed the objectives (a run starts empty, so a longer one would only do worse), or still SATURATED at
 *   the longest run the search may make.
 * - `lengthen`: met the objectives, but the verdict is SATURATED (a short run's fill can look like growth), unknown,
 *   or STABLE over too short a window: run it again with more prompts.
 * - `not_judged`: the run failed, its harness was SUSPECT (servelab's own lateness may have made its latencies, for
 *   better or worse: neither a pass nor a fail can be trusted; docs/metrics.md, "Harness"), or it was still too short
 *   at the longest run the search may make.
 */
/** The rule above in one line, for search.csv. */
export const PASSING_CRITERION = `objectives met by the attainment share of requests, and the verdict STABLE over a window long enough to see a backlog growing at ${VERDICT_THRESHOLDS.min_growth_share * 100}% of the offered rate`;

export type ProbeState = 'pass' | 'fail' | 'lengthen' | 'not_judged';

export interface ProbeJudgement {
  state: ProbeState;
  /** Why, in a few words, for the table and search.csv. */
  why: string;
}

export function judgeProbe(summary: Summary | undefined, attainment: number, atLongest: boolean): ProbeJudgement {
  if (summary === undefined) return { state: 'not_judged', why: 'the run failed' };
  if (summary.harness?.state === 'suspect') return { state: 'not_judged', why: 'harness SUSPECT: servelab itself may have shaped the latencies' };
  const fraction = summary.goodput?.fraction;
  if (fraction === undefined || fraction === null) return { state: 'not_judged', why: 'no goodput measured' };
  if (fraction < attainment) return { state: 'fail', why: `objectives missed (${percent(fraction)} met them)` };
  const verdict = summary.verdict;
  if (verdict.state === 'saturated') return atLongest ? { state: 'fail', why: 'objectives met but SATURATED' } : { state: 'lengthen', why: 'SATURATED in a short run' };
  if (verdict.state === 'stable' && longEnoughToJudge(verdict)) return { state: 'pass', why: 'objectives met, STABLE' };
  const share = smallestDetectableGrowthShare(verdict);
  const tooShort = share === null ? `verdict ${verdict.state}` : `too short to judge (sees growth ≥ ${percent(share)} of the rate)`;
  return atLongest ? { state: 'not_judged', why: tooShort } : { state: 'lengthen', why: tooShort };
}

const percent = (share: number): string => `${Math.round(share * 1000) / 10}%`;
