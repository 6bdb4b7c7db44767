import { builtinTarget } from '../orchestration/launch-targets/registry.js';
import type { RunData } from '../types/run.js';
import type { DerivedColumnName } from '../types/summary.js';

/** How the reports qualify a stage the engine did not model (its time is 0 by construction, not a measured 0). */
export const NOT_MODELLED = 'not modelled by the simulated engine';

/**
 * The derived columns the run's engine does not model, as its target says (the simulated engine's tokenize time). A
 * target loaded from a module is not known here: its columns count as measured.
 */
export function unmodelledColumns(run: RunData): ReadonlySet<DerivedColumnName> {
  return new Set(builtinTarget(run.info.target)?.unmodelledColumns ?? []);
}
