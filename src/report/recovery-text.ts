import type { RecoveryInfo } from '../types/run.js';

/** How much `servelab report` rebuilt of an incomplete run directory, in one sentence. */
export function recoveryText(recovered: RecoveryInfo): string {
  const dropped = recovered.droppedLines === 0 ? '' : ` (${recovered.droppedLines} torn line${recovered.droppedLines === 1 ? '' : 's'} dropped)`;
  const rebuilt = recovered.missingFiles.length === 0 ? '' : `; ${recovered.missingFiles.join(', ')} had not been written`;
  const t0 = recovered.t0Known ? '' : "; the run's t0 was not on disk: times are still seconds after it, but its wall-clock instant is unknown (t0 = 0 in summary.json)";
  return `${recovered.records} records read back from requests.jsonl${dropped}${rebuilt}${t0}`;
}
