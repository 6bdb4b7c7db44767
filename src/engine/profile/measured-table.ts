import type { CostModel, MeasuredStepTable, RooflineCoefficients, StepWork } from '../../types/engine.js';
import type { Milliseconds } from '../../types/time.js';
import { MeasuredTableReader, readerFor } from './measured-table-reader.js';
import { rooflineStepMs } from './roofline-step.js';

/**
 * Step duration read off a measured table (a `measured` profile): interpolated over decode sequences x prefill tokens
 * x KV tokens read (interpolateStepMs, through a reader prepared once). Below an axis's first point the time is held.
 * Past an axis's last point, a table with a fitted `fallback` (calibration writes one) prices the step as the table at
 * its edge plus what the fitted roofline form adds from the edge to the step, and counts the step: a table's last
 * segment carried past its points had predicted a saturation collapse on a real engine at batch sizes it never
 * measured (bench/real-engine/README.md). Without a fallback (tables written before there was one) the last segment's
 * slope is carried on. Never below zero.
 */
export class MeasuredTableCostModel implements CostModel {
  readonly #reader: MeasuredTableReader;
  readonly #fallback: RooflineCoefficients | undefined;
  readonly #edge: { decodeSequences: number; prefillTokens: number; kvTokens: number };
  #fallbackSteps = 0;

  constructor(table: MeasuredStepTable, fallback?: RooflineCoefficients) {
    this.#reader = new MeasuredTableReader(table, fallback);
    this.#fallback = fallback;
    this.#edge = {
      decodeSequences: table.decodeSequences[table.decodeSequences.length - 1] as number,
      prefillTokens: table.prefillTokens[table.prefillTokens.length - 1] as number,
      kvTokens: table.kvTokens[table.kvTokens.length - 1] as number,
    };
  }

  /** Steps priced past the table's points by the fitted form. */
  get fallbackSteps(): number {
    return this.#fallbackSteps;
  }

  stepDurationMs(work: StepWork): Milliseconds {
    const edge = this.#edge;
    const beyond = work.decodeSequences > edge.decodeSequences || work.prefillTokens > edge.prefillTokens || work.decodeKvTokens > edge.kvTokens;
    if (!beyond || this.#fallback === undefined) {
      return Math.max(0, this.#reader.stepMs(work.decodeSequences, work.prefillTokens, work.decodeKvTokens));
    }
    this.#fallbackSteps++;
    const prefillTokens = Math.min(work.prefillTokens, edge.prefillTokens);
    const clamped: StepWork = {
      decodeSequences: Math.min(work.decodeSequences, edge.decodeSequences),
      prefillTokens,
      // Attention pairs shrink with the chunk in proportion (a first-order share: the table prices the edge itself).
      prefillAttentionPairs: work.prefillTokens === 0 ? 0 : work.prefillAttentionPairs * (prefillTokens / work.prefillTokens),
      decodeKvTokens: Math.min(work.decodeKvTokens, edge.kvTokens),
    };
    const edgeMs = this.#reader.stepMs(clamped.decodeSequences, clamped.prefillTokens, clamped.decodeKvTokens);
    const beyondEdgeMs = rooflineStepMs(this.#fallback, work) - rooflineStepMs(this.#fallback, clamped);
    return Math.max(0, edgeMs + Math.max(0, beyondEdgeMs));
  }
}

/**
 * A step's time as the table prices it: the cell interpolated (interpolateStepMs), and for a mixed step of a table
 * whose `mixedPrefillTokens` is 'step', its prompt part moved from the prompt's tokens to the step's (prompt tokens
 * plus one per decoding sequence) along the prefill row, so that a step crossing a padded shape pays it
 * (MeasuredStepTable). The one reading of a table: the twin's cost model and calibrate's errors both use it.
 */
export function tableStepMs(
  table: MeasuredStepTable,
  decodeSequences: number,
  prefillTokens: number,
  kvTokens: number,
  form?: RooflineCoefficients,
): number {
  return readerFor(table, form).stepMs(decodeSequences, prefillTokens, kvTokens);
}

/**
 * The table's step time at a point. Between grid points: straight along KV tokens; along prefill tokens and along
 * decode sequences a monotone cubic, its slope at each point taken from the points either side, so that it follows
 * the curvature the table shows instead of the chord under a concave law (monotone-cubic.ts). Over a loaded foreign
 * engine's steps (measured-table-fit.test.ts) the chords had priced them 1.3% cheap on average, worst 2.6%; read this
 * way (and built the same way, measured-table-fit.ts), 0.15%, worst 0.8%. KV stays straight: that axis holds every
 * batch size's KV points, so its segments are short, and for any one batch most of its points are the builder's reads
 * (held or carried on past what the batch measured), which a curve would carry into the segments beside them.
 *
 * Below an axis's first point the value is held. An axis's last segment is read straight, and carried on past the
 * last point (MeasuredTableCostModel keeps a table with a fallback from reading there): buildMeasuredTable's KV axis
 * ends at a point of its own making (twice the largest KV measured, along each batch's mean slope), which a curve
 * would bend into the measured segments before it.
 *
 * With the fitted form (`form`, a profile's `fallback`), what is interpolated is each cell less the form's floor lift
 * (floor-lift.ts), and the lift at the point is added back, so that a curve between a cell on the floor and one past
 * its knee bends at the knee instead of cutting across it; grid points read their cells either way.
 */
export function interpolateStepMs(
  table: MeasuredStepTable,
  decodeSequences: number,
  prefillTokens: number,
  kvTokens: number,
  form?: RooflineCoefficients,
): number {
  return readerFor(table, form).cellMs(decodeSequences, prefillTokens, kvTokens);
}
