import type { RooflineCoefficients, StepWork } from '../../types/engine.js';

/**
 * The roofline step time: a decode step at small batch is memory bound (every weight is read once, whatever the
 * batch), so the weights floor dominates; large prefills and large decode batches become compute or KV-read bound and
 * grow past it.
 *
 *   stepMs = stepOverheadMs + max(weightsFloorMs, prefill + attention + decode + kvRead)
 */
export function rooflineStepMs(c: RooflineCoefficients, work: StepWork): number {
  const variableMs =
    work.prefillTokens * c.prefillPerTokenMs +
    work.prefillAttentionPairs * c.prefillAttentionPerPairMs +
    work.decodeSequences * c.decodePerSequenceMs +
    work.decodeKvTokens * c.kvReadPerTokenMs;
  return c.stepOverheadMs + Math.max(c.weightsFloorMs, variableMs);
}
