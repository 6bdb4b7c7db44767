import { coefficientOfVariation } from '../src/analysis/statistics.js';

/**
 * The rate (per second) and the inter-arrival coefficient of variation of sorted instants given in `unitsPerSecond`
 * units (1: seconds), the CV as a run's summary computes it (src/analysis/statistics.ts): for the load benchmarks,
 * which read them at the pacer or at the server's receive stamps.
 */
export function rateAndCv(sortedInstants: Float64Array, unitsPerSecond = 1): { rate: number; cv: number } {
  const count = sortedInstants.length;
  const gaps = new Float64Array(count - 1);
  for (let index = 1; index < count; index++) gaps[index - 1] = (sortedInstants[index] as number) - (sortedInstants[index - 1] as number);
  return { rate: (unitsPerSecond * (count - 1)) / ((sortedInstants[count - 1] as number) - (sortedInstants[0] as number)), cv: coefficientOfVariation(gaps) ?? Number.NaN };
}
