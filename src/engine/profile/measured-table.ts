import type { CostModel, MeasuredStepTable, RooflineCoefficients, StepWork } from '../../types/engine.js';
import type { Milliseconds } from '../../types/time.js';
import { floorLiftMs } from './floor-lift.js';
import { monotoneCubicInSegment, segmentOf } from './monotone-cubic.js';
import { rooflineStepMs } from './roofline-step.js';

/**
 * Step duration read off a measured table (a `measured` profile): interpolated over decode sequences x prefill
 * tokens x KV tokens read (interpolateStepMs). Below an axis's first point the time is held. Past an axis's last point, a table
 * with a fitted `fallback` (calibration writes one) prices the step as the table at its edge plus what the fitted
 * roofline form adds from the edge to the step, and counts the step: a table's last segment carried past its points
 * had predicted a saturation collapse on a real engine at batch sizes it never measured (bench/real-engine/README.md).
 * Without a fallback (tables written before there was one) the last segment's slope is carried on. Never below zero.
 */
export class MeasuredTableCostModel implements CostModel {
  readonly #table: MeasuredStepTable;
  readonly #fallback: RooflineCoefficients | undefined;
  readonly #edge: { decodeSequences: number; prefillTokens: number; kvTokens: number };
  #fallbackSteps = 0;

  constructor(table: MeasuredStepTable, fallback?: RooflineCoefficients) {
    this.#table = table;
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
      return Math.max(0, tableStepMs(this.#table, work.decodeSequences, work.prefillTokens, work.decodeKvTokens, this.#fallback));
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
    const edgeMs = tableStepMs(this.#table, clamped.decodeSequences, clamped.prefillTokens, clamped.decodeKvTokens, this.#fallback);
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
  const cellMs = interpolateStepMs(table, decodeSequences, prefillTokens, kvTokens, form);
  if (table.mixedPrefillTokens !== 'step' || decodeSequences <= 0 || prefillTokens <= 0) return cellMs;
  return cellMs + interpolateStepMs(table, 0, prefillTokens + decodeSequences, 0, form) - interpolateStepMs(table, 0, prefillTokens, 0, form);
}

/**
 * The value at `value` along `axis` of the points (axis[i], valueAt(i)): held below the first point; between points
 * the monotone cubic through them when `curved` (monotone-cubic.ts; a straight line where the axis has two points);
 * past the last point the last segment carried on (MeasuredTableCostModel keeps a table with a fallback from reading
 * there), and read straight between its two points too: buildMeasuredTable's KV axis ends at a point of its own making
 * (twice the largest KV measured, along each batch's mean slope), which a curve would bend into the measured segments.
 */
function alongAxis(axis: readonly number[], value: number, valueAt: (index: number) => number, curved = true): number {
  if (axis.length === 1 || value <= (axis[0] as number)) return valueAt(0);
  const index = segmentOf(axis, value);
  const high = axis[index + 1] as number;
  if (curved && value <= high && index < axis.length - 2) return monotoneCubicInSegment(axis, valueAt, index, value);
  const low = axis[index] as number;
  const lowMs = valueAt(index);
  return lowMs + ((valueAt(index + 1) - lowMs) * (value - low)) / (high - low);
}

/**
 * The table's step time at a point: straight along KV tokens, then a monotone cubic along prefill tokens and along
 * decode sequences, its slope at each point taken from the points either side, so that it follows the curvature the
 * table shows instead of the chord under a concave law (monotone-cubic.ts). Over a loaded foreign engine's steps
 * (measured-table-fit.test.ts) the chords had priced them 1.3% cheap on average, worst 2.6%; read this way (and built
 * the same way, measured-table-fit.ts), 0.15%, worst 0.8%. KV stays straight: that axis holds every batch size's KV
 * points, so its segments are short, and for any one batch most of its points are the builder's reads (held or carried
 * on past what the batch measured), which a curve would carry into the segments beside them. With the fitted
 * form (`form`, a profile's `fallback`), what is interpolated is each cell less the form's floor lift (floor-lift.ts),
 * and the lift at the point is added back, so that a curve between a cell on the floor and one past its knee bends at
 * the knee instead of cutting across it; grid points read their cells either way.
 */
export function interpolateStepMs(
  table: MeasuredStepTable,
  decodeSequences: number,
  prefillTokens: number,
  kvTokens: number,
  form?: RooflineCoefficients,
): number {
  const lift = (batch: number, prefill: number, kv: number): number => (form === undefined ? 0 : floorLiftMs(form, batch, prefill, kv));
  const total = alongAxis(table.decodeSequences, decodeSequences, (batchIndex) => {
    const plane = table.stepMs[batchIndex] as number[][];
    const batch = table.decodeSequences[batchIndex] as number;
    return alongAxis(table.prefillTokens, prefillTokens, (prefillIndex) => {
      const row = plane[prefillIndex] as number[];
      const prefill = table.prefillTokens[prefillIndex] as number;
      return alongAxis(table.kvTokens, kvTokens, (kvIndex) => (row[kvIndex] as number) - lift(batch, prefill, table.kvTokens[kvIndex] as number), false);
    });
  });
  // Below an axis's first point the table holds its value, and so does the lift.
  const held = (axis: readonly number[], value: number): number => Math.max(value, axis[0] as number);
  return total + lift(held(table.decodeSequences, decodeSequences), held(table.prefillTokens, prefillTokens), held(table.kvTokens, kvTokens));
}
