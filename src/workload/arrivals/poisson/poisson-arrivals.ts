import type { ArrivalProcess } from '../arrival-process.js';
import { offsetsFromDraw } from '../arrival-process.js';

/**
 * Poisson arrivals: exponential gaps with mean 1 / rate, summed into absolute instants. By default (`draw:
 * 'conditioned'`) the gaps are rescaled to span exactly (count − 1) / rate, a Poisson process conditioned on its
 * count, so the scheduled rate is the target; `draw: 'independent'` keeps the i.i.d. sum as bench_serving draws it.
 */
export const poissonArrivals: ArrivalProcess = {
  name: 'poisson',
  createOffsetsMs(settings, count, random) {
    const rate = settings.requestRate;
    if (rate === Infinity) return new Float64Array(count);
    return offsetsFromDraw(settings.draw, count, rate, () => random.exponential(rate));
  },
  unitGaps(_settings, random) {
    return () => random.exponential(1);
  },
};
