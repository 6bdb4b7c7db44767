import { ServelabError } from '../../../errors/servelab-error.js';
import type { ArrivalProcess } from '../arrival-process.js';
import { offsetsFromDraw } from '../arrival-process.js';

/**
 * Gamma arrivals: i.i.d. gamma gaps with shape = burstiness and scale = 1 / (rate × burstiness), so the mean gap stays
 * 1 / rate whatever the burstiness while the gaps' coefficient of variation is 1 / sqrt(burstiness). Burstiness 1 is
 * Poisson; below 1 requests come in clumps, above 1 they come more evenly. By default (`draw: 'conditioned'`) the gaps
 * are rescaled to span exactly (count − 1) / rate (see offsetsFromRescaledGaps for what that does to their law).
 */
export const gammaArrivals: ArrivalProcess = {
  name: 'gamma',
  createOffsetsMs(settings, count, random) {
    const rate = settings.requestRate;
    const burstiness = checkedBurstiness(settings.burstiness);
    if (rate === Infinity) return new Float64Array(count);
    const scaleSeconds = 1 / (rate * burstiness);
    return offsetsFromDraw(settings.draw, count, rate, () => random.gamma(burstiness, scaleSeconds));
  },
  unitGaps(settings, random) {
    const burstiness = checkedBurstiness(settings.burstiness);
    return () => random.gamma(burstiness, 1 / burstiness);
  },
};

function checkedBurstiness(burstiness = 1): number {
  if (!(burstiness > 0) || !Number.isFinite(burstiness)) {
    throw new ServelabError(
      'INVALID_CONFIG',
      `burstiness must be a finite number above 0 (1 = Poisson, smaller = burstier), got ${String(burstiness)}`,
    );
  }
  return burstiness;
}
