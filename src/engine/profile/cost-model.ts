import type { CostModel, EngineProfile, RooflineCoefficients, StepWork } from '../../types/engine.js';
import type { Milliseconds } from '../../types/time.js';
import { MeasuredTableCostModel } from './measured-table.js';
import { rooflineStepMs } from './roofline-step.js';

/**
 * Step duration from a roofline profile:
 *
 *   stepMs = stepOverheadMs + max(weightsFloorMs, prefill + attention + decode + kvRead)
 *
 * A decode step at small batch is memory bound (every weight is read once, whatever the batch), so the weights floor
 * dominates; large prefills and large decode batches become compute or KV-read bound and grow past it.
 */
export class RooflineCostModel implements CostModel {
  readonly #coefficients: RooflineCoefficients;

  constructor(coefficients: RooflineCoefficients) {
    this.#coefficients = coefficients;
  }

  stepDurationMs(work: StepWork): Milliseconds {
    return rooflineStepMs(this.#coefficients, work);
  }
}

/** Every step takes exactly `stepMs`, whatever it does. */
export class FixedStepCostModel implements CostModel {
  readonly #stepMs: Milliseconds;

  constructor(stepMs: Milliseconds) {
    this.#stepMs = stepMs;
  }

  stepDurationMs(_work: StepWork): Milliseconds {
    return this.#stepMs;
  }
}

export function costModelFor(profile: EngineProfile): CostModel {
  if (profile.kind === 'simple') return new FixedStepCostModel(profile.stepMs);
  if (profile.kind === 'measured') return new MeasuredTableCostModel(profile.table, profile.fallback);
  return new RooflineCostModel(profile.coefficients);
}

/** Attention pairs of a chunk of `chunkTokens` new tokens after `priorTokens` already in KV. */
export function attentionPairs(priorTokens: number, chunkTokens: number): number {
  return chunkTokens * (priorTokens + (chunkTokens + 1) / 2);
}
