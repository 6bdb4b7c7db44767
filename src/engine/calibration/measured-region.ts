import type { MeasuredRange, ProfileRegion } from '../../types/engine.js';
import type { StepObservation } from './fit-profile.js';

/**
 * The region of step shapes a calibration measured: the batch sizes and KV tokens of its decode (and mixed) steps,
 * the prompt tokens of its prefill steps, and its mixed steps' batch sizes and prompt tokens. A profile carries it so
 * that the twin can count the steps it prices outside (src/engine/profile/region-watch.ts); null without decode or
 * prefill steps.
 */
export function measuredRegion(observations: readonly StepObservation[]): ProfileRegion | null {
  const decoding = observations.filter((o) => o.kind === 'decode' || o.kind === 'mixed');
  const prefilling = observations.filter((o) => o.kind === 'prefill');
  const mixed = observations.filter((o) => o.kind === 'mixed');
  if (decoding.length === 0 || prefilling.length === 0) return null;
  return {
    decodeSequences: rangeOf(decoding.map((o) => o.size)),
    prefillTokens: rangeOf([...prefilling.map((o) => o.size), ...mixed.map((o) => o.prefillTokens ?? 0)]),
    kvTokens: rangeOf(decoding.map((o) => Math.round(o.secondary))),
    mixedSteps: mixed.length === 0 ? null : { decodeSequences: rangeOf(mixed.map((o) => o.size)), prefillTokens: rangeOf(mixed.map((o) => o.prefillTokens ?? 0)) },
  };
}

function rangeOf(values: readonly number[]): MeasuredRange {
  return [Math.min(...values), Math.max(...values)];
}

/** The region in words, for a profile's derivation. */
export function describeRegion(region: ProfileRegion): string {
  const span = ([low, high]: MeasuredRange): string => (low === high ? `${low}` : `${low}-${high}`);
  return (
    `Measured region: batch ${span(region.decodeSequences)}, prefill ${span(region.prefillTokens)} tokens a step, KV ${span(region.kvTokens)} tokens read; ` +
    (region.mixedSteps === null
      ? 'no mixed steps.'
      : `mixed steps at batch ${span(region.mixedSteps.decodeSequences)} with ${span(region.mixedSteps.prefillTokens)} prompt tokens.`) +
    ' A twin run counts the steps it simulates outside this region and says so.'
  );
}
