import type { RunData } from '../types/run.js';
import type { StageConcurrency, Summary } from '../types/summary.js';

type StageEntry = [string, StageConcurrency];

/**
 * The concurrency stages a report shows: a node test has no router, so its in_router stage is empty by construction
 * and its Little's law "pass (0.00%)" would only check 0 = 0.
 */
export function shownStages(run: Pick<RunData, 'info'>, summary: Summary): StageEntry[] {
  const stages = Object.entries(summary.concurrency.stages ?? {}) as StageEntry[];
  return run.info.testLevel === 'node' ? stages.filter(([stage]) => stage !== 'in_router') : stages;
}
