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
  if (evidence.drain_after_last_arrival_s !== null) parts.push(`drained ${format(evidence.drain_after_last_arrival_s)} s after the last arrival`);
  if (evidence.unfinished_requests > 0) parts.push(`${evidence.unfinished_requests} sent requests never finished`);
  return parts.join(', ');
}
