import type { MeasuredStepTable, RooflineCoefficients } from '../../types/engine.js';
import { floorLiftMs } from './floor-lift.js';
import { hermiteAt, segmentOf, slopeAtPoint } from './monotone-cubic.js';

/**
 * A measured table prepared to be read between its points (interpolateStepMs in measured-table.ts says how it is
 * read, and why): its cells less the form's floor lift, and the curve's slope at every prefill point of every row, are
 * worked out once, so that a read costs a few cubic pieces. The twin reads the table once per simulated step; worked
 * out on each read, the curves had made a step's price about six times dearer to compute than the straight lines
 * before them. A table is not changed once read (nothing in servelab writes into one after building it).
 */
export class MeasuredTableReader {
  readonly #table: MeasuredStepTable;
  readonly #form: RooflineCoefficients | undefined;
  readonly #batches: readonly number[];
  readonly #prefills: readonly number[];
  readonly #kvs: readonly number[];
  /** Cell less lift at (batch b, prefill p, KV k): index (b x prefills + p) x kvs + k. */
  readonly #lessLift: Float64Array;
  /** The curve's slope along the prefill axis at each cell, same index. */
  readonly #prefillSlopes: Float64Array;
  /** Values at the batch points, for the curve along the batch axis (only the points near the read are filled). */
  readonly #atBatch: Float64Array;

  constructor(table: MeasuredStepTable, form?: RooflineCoefficients) {
    this.#table = table;
    this.#form = form;
    this.#batches = table.decodeSequences;
    this.#prefills = table.prefillTokens;
    this.#kvs = table.kvTokens;
    const [batchCount, prefillCount, kvCount] = [this.#batches.length, this.#prefills.length, this.#kvs.length];
    this.#lessLift = new Float64Array(batchCount * prefillCount * kvCount);
    this.#prefillSlopes = new Float64Array(this.#lessLift.length);
    this.#atBatch = new Float64Array(batchCount);
    for (let b = 0; b < batchCount; b++) {
      for (let p = 0; p < prefillCount; p++) {
        for (let k = 0; k < kvCount; k++) {
          const cellMs = table.stepMs[b]?.[p]?.[k] as number;
          this.#lessLift[(b * prefillCount + p) * kvCount + k] = cellMs - this.#lift(this.#batches[b] as number, this.#prefills[p] as number, this.#kvs[k] as number);
        }
      }
    }
    if (prefillCount < 3) return;
    const row = new Float64Array(prefillCount);
    for (let b = 0; b < batchCount; b++) {
      for (let k = 0; k < kvCount; k++) {
        for (let p = 0; p < prefillCount; p++) row[p] = this.#lessLift[(b * prefillCount + p) * kvCount + k] as number;
        for (let p = 0; p < prefillCount; p++) this.#prefillSlopes[(b * prefillCount + p) * kvCount + k] = slopeAtPoint(this.#prefills, row, p);
      }
    }
  }

  /** The table's step time at a point (interpolateStepMs). */
  cellMs(decodeSequences: number, prefillTokens: number, kvTokens: number): number {
    const kvs = this.#kvs;
    let total: number;
    if (kvs.length === 1 || kvTokens <= (kvs[0] as number)) {
      total = this.#atKv(0, decodeSequences, prefillTokens);
    } else {
      // Straight along KV, carried on past the last point.
      const k = segmentOf(kvs, kvTokens);
      const weight = (kvTokens - (kvs[k] as number)) / ((kvs[k + 1] as number) - (kvs[k] as number));
      total = weight === 1 ? this.#atKv(k + 1, decodeSequences, prefillTokens) : (1 - weight) * this.#atKv(k, decodeSequences, prefillTokens) + weight * this.#atKv(k + 1, decodeSequences, prefillTokens);
    }
    // Below an axis's first point the table holds its value, and so does the lift.
    const held = (axis: readonly number[], value: number): number => Math.max(value, axis[0] as number);
    return total + this.#lift(held(this.#batches, decodeSequences), held(this.#prefills, prefillTokens), held(kvs, kvTokens));
  }

  /** A step's time as the table prices it (tableStepMs). */
  stepMs(decodeSequences: number, prefillTokens: number, kvTokens: number): number {
    const cellMs = this.cellMs(decodeSequences, prefillTokens, kvTokens);
    if (this.#table.mixedPrefillTokens !== 'step' || decodeSequences <= 0 || prefillTokens <= 0) return cellMs;
    return cellMs + this.cellMs(0, prefillTokens + decodeSequences, 0) - this.cellMs(0, prefillTokens, 0);
  }

  #lift(batch: number, prefill: number, kv: number): number {
    return this.#form === undefined ? 0 : floorLiftMs(this.#form, batch, prefill, kv);
  }

  /** The batch-by-prefill plane at KV point `k`, less lift, read at (batch, prefill): a curve along the batch axis. */
  #atKv(k: number, batch: number, prefill: number): number {
    const batches = this.#batches;
    const last = batches.length - 1;
    if (last === 0 || batch <= (batches[0] as number)) return this.#alongPrefill(0, k, prefill);
    const index = segmentOf(batches, batch);
    const low = batches[index] as number;
    const high = batches[index + 1] as number;
    if (batch === high) return this.#alongPrefill(index + 1, k, prefill);
    if (batch > high || index === last - 1) {
      // The last segment is read straight, and carried on past the last point (interpolateStepMs).
      const lowMs = this.#alongPrefill(index, k, prefill);
      return lowMs + ((this.#alongPrefill(index + 1, k, prefill) - lowMs) * (batch - low)) / (high - low);
    }
    const values = this.#atBatch;
    for (let at = Math.max(0, index - 2); at <= Math.min(last, index + 3); at++) values[at] = this.#alongPrefill(at, k, prefill);
    return hermiteAt(low, high, values[index] as number, values[index + 1] as number, slopeAtPoint(batches, values, index), slopeAtPoint(batches, values, index + 1), batch);
  }

  /** Row (batch point `b`, KV point `k`) less lift, read at `prefill`: a curve along the prefill axis, its slopes worked out once. */
  #alongPrefill(b: number, k: number, prefill: number): number {
    const prefills = this.#prefills;
    const kvCount = this.#kvs.length;
    const base = b * prefills.length * kvCount + k;
    const last = prefills.length - 1;
    if (last === 0 || prefill <= (prefills[0] as number)) return this.#lessLift[base] as number;
    const index = segmentOf(prefills, prefill);
    const low = prefills[index] as number;
    const high = prefills[index + 1] as number;
    const lowAt = base + index * kvCount;
    const highAt = lowAt + kvCount;
    const lowMs = this.#lessLift[lowAt] as number;
    const highMs = this.#lessLift[highAt] as number;
    if (prefill === high) return highMs;
    if (prefill > high || index === last - 1) return lowMs + ((highMs - lowMs) * (prefill - low)) / (high - low);
    return hermiteAt(low, high, lowMs, highMs, this.#prefillSlopes[lowAt] as number, this.#prefillSlopes[highAt] as number, prefill);
  }
}

const readers = new WeakMap<MeasuredStepTable, { form: RooflineCoefficients | undefined; reader: MeasuredTableReader }>();

/**
 * The prepared reader of a table with a form, kept from one read to the next while both are the same objects
 * (calibrate and the builder read a table through the free functions, many times with one form).
 */
export function readerFor(table: MeasuredStepTable, form?: RooflineCoefficients): MeasuredTableReader {
  const kept = readers.get(table);
  if (kept !== undefined && kept.form === form) return kept.reader;
  const reader = new MeasuredTableReader(table, form);
  readers.set(table, { form, reader });
  return reader;
}
