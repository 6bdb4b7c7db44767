import type { ArrivalProcess } from '../arrival-process.js';
import { offsetsFromGaps } from '../arrival-process.js';

/** Poisson arrivals: i.i.d. exponential gaps with mean 1 / rate, summed into absolute instants. */
export const poissonArrivals: ArrivalProcess = {
  name: 'poisson',
  createOffsetsMs(settings, count, random) {
    const rate = settings.requestRate;
    if (rate === Infinity) return new Float64Array(count);
    return offsetsFromGaps(count, () => random.exponential(rate));
  },
  unitGaps(_settings, random) {
    return () => random.exponential(1);
  },
};
