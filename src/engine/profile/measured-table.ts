import type { CostModel, MeasuredStepTable, StepWork } from '../../types/engine.js';
import type { Milliseconds } from '../../types/time.js';

/**
 * Step duration read off a measured table (a `measured` profile): multilinear interpolation over decode sequences x
 * prefill tokens x KV tokens read. Past an axis's last point the time follows the last segment's slope (step time keeps
 * growing with work the sweep did not reach); below its first point it is held. Never below zero.
 */
export class MeasuredTableCostModel implements CostModel {
  readonly #table: MeasuredStepTable;

  constructor(table: MeasuredStepTable) {
    this.#table = table;
  }

  stepDurationMs(work: StepWork): Milliseconds {
    return Math.max(0, interpolateStepMs(this.#table, work.decodeSequences, work.prefillTokens, work.decodeKvTokens));
  }
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

export function interpolateStepMs(table: MeasuredStepTable, decodeSequences: number, prefillTokens: number, kvTokens: number): number {
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
        total += wa * wb * wc * (row[c.index + dc] as number);
      }
    }
  }
  return total;
}
