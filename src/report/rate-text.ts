import type { OfferedLoad } from '../types/summary.js';

/**
 * "target / scheduled / achieved" arrival rates as one line of text. The target is `n/a` when the run has none (trace
 * replay, closed loop, staged load) and `inf` when everything was sent at once; the percentage compares achieved with
 * target. The scheduled rate is the rate of the drawn schedule: a short Poisson run misses its target by chance, and
 * comparing achieved with scheduled shows whether the pacer itself kept up.
 */
export function arrivalRatesText(load: OfferedLoad, format: (value: number | null) => string): string {
  const target = load.targetRate === null ? 'n/a' : Number.isFinite(load.targetRate) ? format(load.targetRate) : 'inf';
  const ratio = load.achievedToTargetRatio === null ? '' : ` (${format(load.achievedToTargetRatio * 100)}% of target)`;
  // `?? null`: a summary written before scheduledRate existed lacks it.
  return `${target} / ${format(load.scheduledRate ?? null)} / ${format(load.achievedRate)} req/s${ratio}`;
}

/** The target rate of a run as a phrase for chart captions. */
export function targetRatePhrase(requestRate: number | null): string {
  if (requestRate === null || Number.isNaN(requestRate)) return 'no single target rate';
  return Number.isFinite(requestRate) ? `${requestRate} req/s` : 'infinite: all at once';
}
