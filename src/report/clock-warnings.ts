import type { ClockOffsetEstimate } from '../types/clock-offset.js';
import type { Summary } from '../types/summary.js';

/**
 * Whether an estimate deserves a warning on top of a report: the requests prove the server's clock is off this host's
 * by more than the uncertainty of the stages it shifts (network_time, tokenize_time, the server columns), or they do
 * not agree on one offset at all.
 */
export function needsClockWarning(estimate: ClockOffsetEstimate): boolean {
  if (estimate.offsetMs === null || estimate.uncertaintyMs === null) return false;
  return Math.abs(estimate.offsetMs) > estimate.uncertaintyMs || !estimate.consistent;
}

/** One line per server whose clock needs a warning: the host and what servelab made of it. */
export function clockWarnings(summary: Summary): string[] {
  return (summary.clockOffsets ?? []).filter(needsClockWarning).map((estimate) => `${estimate.host}: ${estimate.note}`);
}
