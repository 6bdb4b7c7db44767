import type { ArrivalProcess } from '../arrival-process.js';

/** Constant-rate arrivals: request i arrives at i / rate. Computed by multiplication so rounding never accumulates. */
export const constantArrivals: ArrivalProcess = {
  name: 'constant',
  createOffsetsMs(settings, count) {
    const offsetsMs = new Float64Array(count);
    const rate = settings.requestRate;
    if (rate === Infinity) return offsetsMs;
    const gapMs = 1000 / rate;
    for (let index = 0; index < count; index++) offsetsMs[index] = index * gapMs;
    return offsetsMs;
  },
  unitGaps() {
    return () => 1;
  },
};
