import { ServelabError } from '../../errors/servelab-error.js';
import type { CostModel, StepWork } from '../../types/engine.js';
import type { Milliseconds } from '../../types/time.js';

/**
 * A cost model whose every step lasts `scale` times what another prices it at: the twin's sensitivity band runs the
 * same workload with step times moved by the profile's own step error (1 - e and 1 + e), to show how far that error
 * carries into the metrics (near capacity, queueing amplifies it).
 */
export class ScaledStepTimes implements CostModel {
  readonly #inner: CostModel;
  readonly #scale: number;

  constructor(inner: CostModel, scale: number) {
    this.#inner = inner;
    this.#scale = checkedStepTimeScale(scale);
  }

  stepDurationMs(work: StepWork): Milliseconds {
    return this.#inner.stepDurationMs(work) * this.#scale;
  }
}

export function checkedStepTimeScale(scale: number): number {
  if (!Number.isFinite(scale) || scale <= 0) {
    throw new ServelabError('INVALID_CONFIG', `a step-time scale must be a finite number above 0 (got ${scale}); a sensitivity of e% gives 1 - e/100 and 1 + e/100, so keep e below 100`);
  }
  return scale;
}
