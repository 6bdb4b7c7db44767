import type { RooflineCoefficients } from '../../types/engine.js';

/**
 * How far the fitted roofline form's weights floor lifts a step above what its work alone would cost:
 * `max(0, weightsFloorMs - variable)`, 0 once the work is past the floor's knee. The measured table interpolates the
 * step time less this lift and adds the lift back where it is read: a step's cost is a max of the floor and its work,
 * and a straight line between a point on the floor and one past the knee runs above that max (the sim engine's
 * 200-token prefill step came out 2.6% dear between its 192- and 256-token points). Where the form is right the lift
 * bends the line exactly at the knee; away from the floor it is 0 and the table is read as before.
 *
 * The table's axes carry no attention pairs, so a step's prompt tokens are taken as one chunk from an empty cache
 * (`attentionPairs(0, P)` in cost-model.ts, written out here to keep this module free of the cost model), as the
 * calibration's prefill steps were.
 */
export function floorLiftMs(form: RooflineCoefficients, decodeSequences: number, prefillTokens: number, kvTokens: number): number {
  const variableMs =
    prefillTokens * form.prefillPerTokenMs +
    ((prefillTokens * (prefillTokens + 1)) / 2) * form.prefillAttentionPerPairMs +
    decodeSequences * form.decodePerSequenceMs +
    kvTokens * form.kvReadPerTokenMs;
  return Math.max(0, form.weightsFloorMs - variableMs);
}
