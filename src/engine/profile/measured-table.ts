import type { CostModel, MeasuredStepTable, RooflineCoefficients, StepWork } from '../../types/engine.js';
import type { Milliseconds } from '../../types/time.js';
import { floorLiftMs } from './floor-lift.js';
import { rooflineStepMs } from './roofline-step.js';

/**
 * Step duration read off a measured table (a `measured` profile): multilinear interpolation over decode sequences x
 * prefill tokens x KV tokens read. Below an axis's first point the time is held. Past an axis's last point, a table
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

/** Where `value` falls on `axis`: the lower index and the weight of the next point (outside [0, 1] past the last point). */
function locate(axis: readonly number[], value: number): { index: number; weight: number } {
  if (axis.length === 1 || value <= (axis[0] as number)) return { index: 0, weight: 0 };
  let index = 0;
  while (index < axis.length - 2 && value > (axis[index + 1] as number)) index++;
  const low = axis[index] as number;
  const high = axis[index + 1] as number;
  return { index, weight: (value - low) / (high - low) };
}

/**
 * The table's step time at a point: multilinear between grid points. With the fitted form (`form`, a profile's
 * `fallback`), what is interpolated is each cell less the form's floor lift (floor-lift.ts), and the lift at the point
 * is added back, so that a line between a cell on the floor and one past its knee bends at the knee instead of
 * cutting across it; grid points read their cells either way.
 */
export function interpolateStepMs(
  table: MeasuredStepTable,
  decodeSequences: number,
  prefillTokens: number,
  kvTokens: number,
  form?: RooflineCoefficients,
): number {
  const lift = (batch: number, prefill: number, kv: number): number => (form === undefined ? 0 : floorLiftMs(form, batch, prefill, kv));
  const a = locate(table.decodeSequences, decodeSequences);
  const b = locate(table.prefillTokens, prefillTokens);
  const c = locate(table.kvTokens, kvTokens);
  let total = 0;
  for (let da = 0; da <= 1; da++) {
    const wa = da === 0 ? 1 - a.weight : a.weight;
    if (wa === 0 || (da === 1 && table.decodeSequences.length === 1)) continue;
    const plane = table.stepMs[a.index + da] as number[][];
    for (let db = 0; db <= 1; db++) {
      const wb = db === 0 ? 1 - b.weight : b.weight;
      if (wb === 0 || (db === 1 && table.prefillTokens.length === 1)) continue;
      const row = plane[b.index + db] as number[];
      for (let dc = 0; dc <= 1; dc++) {
        const wc = dc === 0 ? 1 - c.weight : c.weight;
        if (wc === 0 || (dc === 1 && table.kvTokens.length === 1)) continue;
        const cellMs = row[c.index + dc] as number;
        const liftMs = lift(table.decodeSequences[a.index + da] as number, table.prefillTokens[b.index + db] as number, table.kvTokens[c.index + dc] as number);
        total += wa * wb * wc * (cellMs - liftMs);
      }
    }
  }
  // Below an axis's first point the table holds its value, and so does the lift.
  const held = (axis: readonly number[], value: number): number => Math.max(value, axis[0] as number);
  return total + lift(held(table.decodeSequences, decodeSequences), held(table.prefillTokens, prefillTokens), held(table.kvTokens, kvTokens));
}
