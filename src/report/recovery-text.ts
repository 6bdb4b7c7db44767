import type { EventImpact } from '../types/summary.js';
import type { RecoveryInfo } from '../types/run.js';

/** How much `servelab report` rebuilt of an incomplete run directory, in one sentence. */
export function recoveryText(recovered: RecoveryInfo): string {
  const dropped = recovered.droppedLines === 0 ? '' : ` (${recovered.droppedLines} torn line${recovered.droppedLines === 1 ? '' : 's'} dropped)`;
  const rebuilt = recovered.missingFiles.length === 0 ? '' : `; ${recovered.missingFiles.join(', ')} had not been written`;
  const t0 = recovered.t0Known ? '' : "; the run's t0 was not on disk: times are still seconds after it, but its wall-clock instant is unknown (t0 = 0 in summary.json)";
  return `${recovered.records} records read back from requests.jsonl${dropped}${rebuilt}${t0}`;
}

/** A restore's recovery in words: the time, "not back to normal by the end", or why it was not judged (no baseline). */
export function eventRecoveryText(impact: Pick<EventImpact, 'recoverySeconds' | 'recoveryNote'>, format: (seconds: number) => string): string | undefined {
  if (impact.recoverySeconds === undefined) return undefined;
  if (impact.recoveryNote !== undefined) return `recovery not judged: ${impact.recoveryNote}`;
  return impact.recoverySeconds === null ? 'not back to normal by the end' : `recovered in ${format(impact.recoverySeconds)} s`;
}

/** A hang's stalled requests in words, or undefined when none waited for the stopped server. */
export function eventStallText(impact: Pick<EventImpact, 'stalls'>, format: (seconds: number) => string): string | undefined {
  const stalls = impact.stalls;
  if (stalls === undefined) return undefined;
  const plural = stalls.requests === 1 ? 'request' : 'requests';
  return `${stalls.requests} ${plural} waited for the stopped server (p50 ${format(stalls.stallSeconds.p50)} s, max ${format(stalls.stallSeconds.max)} s; not counted as network time)`;
}
