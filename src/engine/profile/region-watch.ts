import type { CostModel, MeasuredRange, ProfileRegion, StepWork } from '../../types/engine.js';
import type { Milliseconds } from '../../types/time.js';

/** How far past the measured region the steps of one axis went. */
export interface AxisExcursion {
  /** Steps whose value on this axis lay above the measured range. */
  steps: number;
  /** The largest value seen there, and the top of the measured range. */
  largest: number;
  measuredMax: number;
}

/** What a twin run simulated outside its profile's measured region. */
export interface RegionReport {
  profileName: string;
  totalSteps: number;
  /** Steps outside the region on at least one axis. */
  outsideSteps: number;
  decodeSequences?: AxisExcursion;
  prefillTokens?: AxisExcursion;
  kvTokens?: AxisExcursion;
  /** Mixed steps: where none were measured, every mixed step counts here (`measuredMax` 0). */
  mixedDecodeSequences?: AxisExcursion;
  mixedPrefillTokens?: AxisExcursion;
  /** Steps a measured table priced past its own points by its fitted form (measured profiles with a fallback). */
  tableFallbackSteps?: number;
}

type AxisName = 'decodeSequences' | 'prefillTokens' | 'kvTokens' | 'mixedDecodeSequences' | 'mixedPrefillTokens';

/**
 * A cost model that prices steps with another and counts the steps outside the region the profile was measured over.
 * Only the upper side counts: below its first points a profile holds them (a 20-token prefill priced as a 64-token
 * one is close), while past its last points it extrapolates, which is where a twin's predictions had gone wrong.
 */
export class RegionWatch implements CostModel {
  readonly #inner: CostModel & { readonly fallbackSteps?: number };
  readonly #region: ProfileRegion;
  readonly #profileName: string;
  readonly #excursions = new Map<AxisName, AxisExcursion>();
  #totalSteps = 0;
  #outsideSteps = 0;

  constructor(inner: CostModel & { readonly fallbackSteps?: number }, region: ProfileRegion, profileName: string) {
    this.#inner = inner;
    this.#region = region;
    this.#profileName = profileName;
  }

  stepDurationMs(work: StepWork): Milliseconds {
    this.#totalSteps++;
    const region = this.#region;
    let outside = false;
    const check = (axis: AxisName, value: number, range: MeasuredRange | null): void => {
      const measuredMax = range === null ? 0 : range[1];
      if (value <= measuredMax) return;
      outside = true;
      const excursion = this.#excursions.get(axis);
      if (excursion === undefined) this.#excursions.set(axis, { steps: 1, largest: value, measuredMax });
      else {
        excursion.steps++;
        if (value > excursion.largest) excursion.largest = value;
      }
    };
    if (work.decodeSequences > 0) {
      check('decodeSequences', work.decodeSequences, region.decodeSequences);
      check('kvTokens', work.decodeKvTokens, region.kvTokens);
    }
    if (work.prefillTokens > 0) check('prefillTokens', work.prefillTokens, region.prefillTokens);
    if (work.decodeSequences > 0 && work.prefillTokens > 0) {
      check('mixedDecodeSequences', work.decodeSequences, region.mixedSteps?.decodeSequences ?? null);
      check('mixedPrefillTokens', work.prefillTokens, region.mixedSteps?.prefillTokens ?? null);
    }
    if (outside) this.#outsideSteps++;
    return this.#inner.stepDurationMs(work);
  }

  report(): RegionReport {
    const excursions = Object.fromEntries([...this.#excursions].map(([axis, excursion]) => [axis, { ...excursion }]));
    const fallback = this.#inner.fallbackSteps;
    return {
      profileName: this.#profileName,
      totalSteps: this.#totalSteps,
      outsideSteps: this.#outsideSteps,
      ...excursions,
      ...(fallback === undefined ? {} : { tableFallbackSteps: fallback }),
    };
  }
}

/** Several engines' reports as one (a routing test's engines share a profile); null when there are none. */
export function mergeRegionReports(reports: readonly RegionReport[]): RegionReport | null {
  const [first, ...rest] = reports;
  if (first === undefined) return null;
  const merged: RegionReport = { ...first };
  for (const report of rest) {
    merged.totalSteps += report.totalSteps;
    merged.outsideSteps += report.outsideSteps;
    if (report.tableFallbackSteps !== undefined) merged.tableFallbackSteps = (merged.tableFallbackSteps ?? 0) + report.tableFallbackSteps;
    for (const axis of ['decodeSequences', 'prefillTokens', 'kvTokens', 'mixedDecodeSequences', 'mixedPrefillTokens'] as const) {
      const theirs = report[axis];
      if (theirs === undefined) continue;
      const ours = merged[axis];
      merged[axis] = ours === undefined ? { ...theirs } : { steps: ours.steps + theirs.steps, largest: Math.max(ours.largest, theirs.largest), measuredMax: ours.measuredMax };
    }
  }
  return merged;
}

const AXIS_WORDS: Record<AxisName, string> = {
  decodeSequences: 'batch',
  prefillTokens: 'prefill tokens',
  kvTokens: 'KV tokens read',
  mixedDecodeSequences: 'mixed-step batch',
  mixedPrefillTokens: 'mixed-step prefill tokens',
};

/** One sentence for the run's notices; null when every step lay inside the region. */
export function describeRegionReport(report: RegionReport): string | null {
  if (report.outsideSteps === 0) return null;
  const share = (100 * report.outsideSteps) / Math.max(1, report.totalSteps);
  const axes = (Object.keys(AXIS_WORDS) as AxisName[]).flatMap((axis) => {
    const excursion = report[axis];
    if (excursion === undefined) return [];
    const how =
      excursion.measuredMax === 0
        ? 'never measured'
        : `up to ${Math.round(excursion.largest)}, measured to ${Math.round(excursion.measuredMax)} (${(excursion.largest / excursion.measuredMax).toFixed(2)}x)`;
    return [`${AXIS_WORDS[axis]} ${how} in ${excursion.steps} steps`];
  });
  const fallback =
    report.tableFallbackSteps === undefined || report.tableFallbackSteps === 0
      ? ''
      : `; the measured table priced ${report.tableFallbackSteps} steps past its points by its fitted form`;
  return (
    `virtual time: ${report.outsideSteps} of ${report.totalSteps} steps (${share.toFixed(1)}%) lay outside the region profile ${report.profileName} ` +
    `was measured over (${axes.join('; ')})${fallback}; predictions there are extrapolated: calibrate again with a sweep that reaches them (servelab calibrate --max-batch, --kv-prompt-lengths)`
  );
}
