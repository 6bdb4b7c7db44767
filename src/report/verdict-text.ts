import { longEnoughToJudge, smallestDetectableGrowthShare } from '../analysis/verdict.js';
import type { LoadVerdict } from '../types/verdict.js';

/** The verdict's state as the reports print it on top: STABLE, SATURATED, UNKNOWN. */
export function verdictLabel(verdict: LoadVerdict): string {
  return verdict.state.toUpperCase();
}

/**
 * The evidence behind a verdict beside its reason, as one line: the backlog's peak, how long the system took to empty
 * after the last arrival, and requests sent that never finished. Empty when there is no evidence.
 */
export function verdictDetailText(verdict: LoadVerdict, format: (value: number | null) => string): string {
  const evidence = verdict.evidence;
  if (evidence === null) return '';
  const parts = [`in system peak ${evidence.in_system_peak}`];
  // STABLE over a short window only says no backlog grew fast enough for it to see: the line says how fast that was
  // (a starved client's completions at 91% of the offered rate can read STABLE over a window too short to show it).
  const detectable = smallestDetectableGrowthShare(verdict);
  if (verdict.state === 'stable' && !longEnoughToJudge(verdict) && detectable !== null) {
    parts.push(`too short to see a backlog growing slower than ${(Math.round(detectable * 1000) / 10).toString()}% of the offered rate (a run long enough to judge sees ${(verdict.thresholds.min_growth_share * 100).toString()}%)`);
  }
  if (evidence.drain_after_last_arrival_s !== null) parts.push(`drained ${format(evidence.drain_after_last_arrival_s)} s after the last arrival`);
  if (evidence.unfinished_requests > 0) parts.push(`${evidence.unfinished_requests} sent requests never finished`);
  return parts.join(', ');
}
