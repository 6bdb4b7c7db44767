import type { RequestRecord } from '../types/record.js';
import { takeFloat64, type Float64Arena } from './float-arena.js';

// The succeeded records' inter-token latencies, pooled over the run: all of them (statistics) or a sample (charts).

/** How many inter-token latencies the succeeded records hold (NaN ones included). */
export function countInterTokenLatencies(records: readonly RequestRecord[]): number {
  let total = 0;
  for (const record of records) if (record.success && record.interTokenLatencies) total += record.interTokenLatencies.length;
  return total;
}

/** Every inter-token latency of the succeeded records in one Float64Array (NaN dropped). */
export function pooledInterTokenLatencies(records: readonly RequestRecord[], arena?: Float64Arena): Float64Array {
  const pooled = takeFloat64(arena, countInterTokenLatencies(records));
  let offset = 0;
  for (const record of records) {
    const gaps = record.interTokenLatencies;
    if (!record.success || !gaps) continue;
    for (let index = 0; index < gaps.length; index++) {
      const gap = gaps[index] as number;
      if (gap === gap) pooled[offset++] = gap; // skip NaN, should a client ever produce one
    }
  }
  return pooled.subarray(0, offset);
}

/**
 * Every k-th inter-token latency of the succeeded records, in record order, k chosen so that at most `maxCount`
 * remain: what pooledInterTokenLatencies followed by a stride sample gives, without first copying every gap (a
 * long-output run has millions, and a chart's curve needs a hundred thousand). NaN gaps are skipped and not counted.
 * The smallest and the largest gap follow the sample (two values more), so that a curve drawn from it spans the
 * true range: the tail is what a stride sample would most likely miss.
 */
export function sampledInterTokenLatencies(records: readonly RequestRecord[], maxCount: number): Float64Array {
  const total = countInterTokenLatencies(records);
  const stride = Math.max(1, Math.ceil(total / Math.max(1, maxCount)));
  const sample = new Float64Array(Math.min(total, Math.ceil(total / stride)) + 2);
  let kept = 0;
  let smallest = Number.POSITIVE_INFINITY;
  let largest = Number.NEGATIVE_INFINITY;
  // Position of the next gap to keep, counted over the finite gaps of all records together.
  let untilNext = 0;
  for (const record of records) {
    const gaps = record.interTokenLatencies;
    if (!record.success || !gaps) continue;
    for (let index = 0; index < gaps.length; index++) {
      const gap = gaps[index] as number;
      if (gap !== gap) continue;
      if (gap < smallest) smallest = gap;
      if (gap > largest) largest = gap;
      if (untilNext === 0) {
        sample[kept++] = gap;
        untilNext = stride;
      }
      untilNext--;
    }
  }
  if (kept === 0) return sample.subarray(0, 0);
  sample[kept++] = smallest;
  sample[kept++] = largest;
  return sample.subarray(0, kept);
}
