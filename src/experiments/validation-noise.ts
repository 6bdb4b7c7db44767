import type { TwinHeadlineMetricKey } from '../analysis/twin-headline-metrics.js';
import type { ValidationMetricVerdict, ValidationVerdict } from '../types/engine.js';
import type { IntervalEstimate, Summary } from '../types/summary.js';

/**
 * How much of a validation error the server's own run can account for. Validation runs are short (40-240 requests), so
 * a real run's tail percentile is itself uncertain: on a GPU engine at 137 requests the real TTFT p90's 95% interval was
 * about +-13.7% of it, and a twin 18.8% off sat barely outside it, while TPOT p50's was +-1%. Every run states its
 * bootstrap intervals over its requests (summary.precision, docs/statistics.md); this reads them per headline metric.
 */

/** The validation's target: the twin within this share of the server on every headline metric (issue 26). */
export const VALIDATION_TARGET_PERCENT = 15;

/** The real run's interval for a metric, in the metric's unit (seconds) and as signed percent of its estimate. */
export interface RunNoise {
  low: number;
  high: number;
  lowPercent: number;
  highPercent: number;
}

/** Where each headline metric's interval lives in summary.precision; throughput has none (one run gives one value). */
const PRECISION_OF: Partial<Record<TwinHeadlineMetricKey, readonly [string, 'p50' | 'p90']>> = {
  ttftP50: ['ttftSeconds', 'p50'],
  ttftP90: ['ttftSeconds', 'p90'],
  tpotP50: ['tpotSeconds', 'p50'],
  e2eP50: ['totalLatencySeconds', 'p50'],
  e2eP90: ['totalLatencySeconds', 'p90'],
};

/** The run's 95% interval for `key`; undefined where it has none (throughput, too few values, a summary from before precision). */
export function runNoise(summary: Summary, key: TwinHeadlineMetricKey): RunNoise | undefined {
  const place = PRECISION_OF[key];
  if (place === undefined) return undefined;
  const [metric, percentile] = place;
  const interval: IntervalEstimate | undefined = summary.precision?.metrics[metric]?.[percentile];
  if (interval === undefined || interval.low === null || interval.high === null) return undefined;
  const { estimate, low, high } = interval;
  // A zero estimate (no gaps to time) has no percentages to give.
  if (!(estimate > 0) || !Number.isFinite(low) || !Number.isFinite(high)) return undefined;
  return { low, high, lowPercent: (100 * (low - estimate)) / estimate, highPercent: (100 * (high - estimate)) / estimate };
}

/**
 * A figure's verdict: within the target; else within the real run's noise when the twin's value lies inside its
 * interval; else a miss. A missing value (NaN error) is a miss.
 */
export function validationVerdict(errorPercent: number, twin: number, noise: RunNoise | undefined, targetPercent = VALIDATION_TARGET_PERCENT): ValidationVerdict {
  if (Math.abs(errorPercent) <= targetPercent) return 'within target';
  if (noise !== undefined && twin >= noise.low && twin <= noise.high) return 'within noise';
  return 'miss';
}

/** The verdict as a profile file keeps it: the interval's percentages rounded to 0.01. */
export function metricVerdict(verdict: ValidationVerdict, noise: RunNoise | undefined): ValidationMetricVerdict {
  return noise === undefined ? { verdict } : { verdict, noiseLowPercent: round2(noise.lowPercent), noiseHighPercent: round2(noise.highPercent) };
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
