import type { LittlesLawCheck } from '../types/summary.js';
import type { EpochSeconds } from '../types/time.js';
import type { Intervals } from './timeseries.js';

/** The share of the arrival period left out at each end: the ramp-up before the window, the drain after it. */
export const STEADY_EDGE_FRACTION = 0.1;
/** The largest |λW − L| / L that passes. */
export const LITTLES_LAW_TOLERANCE = 0.1;
/** Fewer entries than this inside the window: too few to tell (the check says so instead of passing). */
export const MIN_ENTRIES = 50;
/**
 * The window must be this many median residence times long: edge effects (requests that straddle either end) are of
 * the order of the residence time over the window length, and must stay well inside the tolerance.
 */
export const MIN_WINDOW_OVER_MEDIAN_RESIDENCE = 20;

export interface SteadyWindow {
  start: EpochSeconds;
  end: EpochSeconds;
}

/** The middle of the arrival period: first arrival + 10% of it to last arrival − 10% of it. Null when it is empty. */
export function steadyWindowOf(firstArrival: number, lastArrival: number): SteadyWindow | null {
  const span = lastArrival - firstArrival;
  if (!(span > 0)) return null;
  return { start: firstArrival + STEADY_EDGE_FRACTION * span, end: lastArrival - STEADY_EDGE_FRACTION * span };
}

/**
 * Little's law over the steady window, for one stage's intervals (each start paired with its end: call it before
 * anything sorts the two arrays separately). One pass, plus a sort of the entries' residence times for the median.
 */
export function checkLittlesLaw(intervals: Intervals, window: SteadyWindow | null): LittlesLawCheck {
  const base = { tolerance: LITTLES_LAW_TOLERANCE };
  if (window === null) {
    return notChecked('the run has no arrival period (fewer than two arrivals, or all at one instant)', null, base);
  }
  const { start: windowStart, end: windowEnd } = window;
  const windowSeconds = windowEnd - windowStart;
  const { starts, ends } = intervals;
  let occupied = 0;
  let entries = 0;
  let residence = 0;
  const residences = new Float64Array(starts.length);
  for (let index = 0; index < starts.length; index++) {
    const start = starts[index] as number;
    const end = ends[index] as number;
    const from = start > windowStart ? start : windowStart;
    const to = end < windowEnd ? end : windowEnd;
    if (to > from) occupied += to - from;
    if (start >= windowStart && start < windowEnd) {
      residences[entries] = end - start;
      residence += end - start;
      entries++;
    }
  }
  if (entries < MIN_ENTRIES) {
    return notChecked(`${entries} entries in the steady window; at least ${MIN_ENTRIES} are needed`, window, base);
  }
  const median = medianOf(residences.subarray(0, entries));
  if (windowSeconds < MIN_WINDOW_OVER_MEDIAN_RESIDENCE * median) {
    return notChecked(
      `the steady window (${windowSeconds.toFixed(3)} s) is shorter than ${MIN_WINDOW_OVER_MEDIAN_RESIDENCE} median residence times (${median.toFixed(3)} s each)`,
      window,
      base,
    );
  }
  const timeWeightedMean = occupied / windowSeconds;
  const entryRate = entries / windowSeconds;
  const meanResidenceSeconds = residence / entries;
  const prediction = entryRate * meanResidenceSeconds;
  const relativeError = timeWeightedMean > 0 ? Math.abs(prediction - timeWeightedMean) / timeWeightedMean : prediction > 0 ? Number.POSITIVE_INFINITY : 0;
  return {
    verdict: relativeError <= LITTLES_LAW_TOLERANCE ? 'pass' : 'fail',
    reason: null,
    windowStart,
    windowEnd,
    timeWeightedMean,
    entryRate,
    meanResidenceSeconds,
    prediction,
    relativeError,
    ...base,
  };
}

function notChecked(reason: string, window: SteadyWindow | null, base: { tolerance: number }): LittlesLawCheck {
  return {
    verdict: 'not_checked',
    reason,
    windowStart: window?.start ?? null,
    windowEnd: window?.end ?? null,
    timeWeightedMean: null,
    entryRate: null,
    meanResidenceSeconds: null,
    prediction: null,
    relativeError: null,
    ...base,
  };
}

function medianOf(values: Float64Array): number {
  values.sort();
  const middle = values.length >> 1;
  return values.length % 2 === 1 ? (values[middle] as number) : ((values[middle - 1] as number) + (values[middle] as number)) / 2;
}
