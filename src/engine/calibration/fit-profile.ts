import type { RooflineCoefficients } from '../../types/engine.js';
import { attentionPairs } from '../profile/cost-model.js';
import { nonNegativeLeastSquares } from './least-squares.js';

/** One measured step duration and what the step did. */
export interface StepObservation {
  /** mixed: a prefill step that also decoded a running batch (engines that mix, e.g. SGLang --enable-mixed-chunk). */
  kind: 'prefill' | 'decode' | 'mixed';
  /** prefill: prompt tokens computed in the step; decode and mixed: sequences decoding in it. */
  size: number;
  /** prefill: attention pairs; decode and mixed: KV tokens those sequences read (batch x mean KV length). */
  secondary: number;
  /** mixed: prompt tokens computed beside the decoding batch. */
  prefillTokens?: number;
  stepMs: number;
  label: string;
  /** The repeated measurements `stepMs` was taken from (robust median), where there were several. */
  samplesMs?: number[];
  /**
   * mixed: the engine's time between steps, read beside this probe (median over repeats): the decoding streams' token
   * interval across the probe's step, less that step (answer-timings.ts `mixedSample`). Absent where it could not be read.
   */
  betweenStepsMs?: number;
}

export interface ProfileFit {
  coefficients: RooflineCoefficients;
  /** Root-mean-square relative error of the fitted model over every observation, in percent. */
  rmsErrorPercent: number;
  maxErrorPercent: number;
  /** Observations above the weights floor, which determine every coefficient except the floor. */
  aboveFloorCount: number;
  /** False when too few steps lay above the floor to fit the slopes: the profile is then the plateau alone. */
  solved: boolean;
  predictions: { observation: StepObservation; predictedMs: number }[];
}

/** A step counts as floor-bound when it is within this fraction of the fastest step measured. */
const PLATEAU_MARGIN = 0.03;

/**
 * Fits stepMs = overhead + max(floor, p*prefillTokens + a*pairs + s*sequences + k*kvTokens) to measured steps.
 *
 * The fastest steps (within 3% of the fastest) sit on the plateau overhead + floor. The other steps are linear in the
 * unknowns: one joint non-negative least-squares fit over them gives the overhead (intercept) and the four slopes,
 * and the floor is the plateau minus the overhead. Identifying all six needs prefill steps of several lengths and
 * decode batches large enough to leave the floor at two different KV lengths; `measureServer` arranges that.
 */
export function fitRooflineProfile(allObservations: readonly StepObservation[]): ProfileFit | null {
  // The roofline form has no term for what mixing costs beyond its parts; mixed steps only check it (their error is
  // reported), they do not pull its coefficients.
  const observations = allObservations.filter((observation) => observation.kind !== 'mixed');
  if (observations.length === 0) return null;
  const plateauMs = Math.min(...observations.map((observation) => observation.stepMs));
  const aboveFloor = observations.filter((observation) => observation.stepMs > plateauMs * (1 + PLATEAU_MARGIN));
  const rows = aboveFloor.map((observation) =>
    observation.kind === 'prefill'
      ? [1, observation.size, observation.secondary, 0, 0]
      : [1, 0, 0, observation.size, observation.secondary],
  );
  const solution = nonNegativeLeastSquares(rows, aboveFloor.map((observation) => observation.stepMs));
  let coefficients: RooflineCoefficients;
  if (solution === null) {
    // Too few steps above the floor: all that can be said is the plateau.
    coefficients = {
      stepOverheadMs: 0,
      weightsFloorMs: plateauMs,
      prefillPerTokenMs: 0,
      prefillAttentionPerPairMs: 0,
      decodePerSequenceMs: 0,
      kvReadPerTokenMs: 0,
    };
  } else {
    const [overhead, perToken, perPair, perSequence, perKvToken] = solution as [number, number, number, number, number];
    const stepOverheadMs = Math.min(overhead, plateauMs);
    coefficients = {
      stepOverheadMs,
      weightsFloorMs: plateauMs - stepOverheadMs,
      prefillPerTokenMs: perToken,
      prefillAttentionPerPairMs: perPair,
      decodePerSequenceMs: perSequence,
      kvReadPerTokenMs: perKvToken,
    };
  }
  const predictions = observations.map((observation) => ({ observation, predictedMs: predictStepMs(coefficients, observation) }));
  const relativeErrors = predictions.map(({ observation, predictedMs }) => (predictedMs - observation.stepMs) / observation.stepMs);
  const rms = Math.sqrt(relativeErrors.reduce((sum, error) => sum + error * error, 0) / relativeErrors.length);
  return {
    coefficients,
    rmsErrorPercent: rms * 100,
    maxErrorPercent: Math.max(...relativeErrors.map((error) => Math.abs(error))) * 100,
    aboveFloorCount: aboveFloor.length,
    solved: solution !== null,
    predictions,
  };
}

export function predictStepMs(coefficients: RooflineCoefficients, observation: StepObservation): number {
  const prefillTerms = (tokens: number, pairs: number): number =>
    tokens * coefficients.prefillPerTokenMs + pairs * coefficients.prefillAttentionPerPairMs;
  const decodeTerms = observation.size * coefficients.decodePerSequenceMs + observation.secondary * coefficients.kvReadPerTokenMs;
  const variable =
    observation.kind === 'prefill'
      ? prefillTerms(observation.size, observation.secondary)
      : observation.kind === 'mixed'
        ? decodeTerms + prefillTerms(observation.prefillTokens ?? 0, attentionPairs(0, observation.prefillTokens ?? 0))
        : decodeTerms;
  return coefficients.stepOverheadMs + Math.max(coefficients.weightsFloorMs, variable);
}

export function prefillObservation(promptTokens: number, stepMs: number): StepObservation {
  return { kind: 'prefill', size: promptTokens, secondary: attentionPairs(0, promptTokens), stepMs, label: `prefill ${promptTokens} tokens` };
}

export function mixedObservation(batch: number, decodeKvTokens: number, prefillTokens: number, stepMs: number): StepObservation {
  return {
    kind: 'mixed',
    size: batch,
    secondary: decodeKvTokens,
    prefillTokens,
    stepMs,
    label: `prefill ${prefillTokens} tokens beside a decode batch of ${batch} at ${Math.round(decodeKvTokens / batch)} KV tokens`,
  };
}

export function decodeObservation(batch: number, meanKvTokens: number, stepMs: number): StepObservation {
  return {
    kind: 'decode',
    size: batch,
    secondary: batch * meanKvTokens,
    stepMs,
    label: `decode batch ${batch} at ${Math.round(meanKvTokens)} KV tokens`,
  };
}
