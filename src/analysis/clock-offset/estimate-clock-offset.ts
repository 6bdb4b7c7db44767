import type { ClockOffsetModel, ClockOffsetSample } from '../../types/clock-offset.js';
import type { EpochSeconds, Seconds } from '../../types/time.js';

/**
 * Estimating a server clock's offset from the requests themselves, the way NTP does from its exchanges.
 *
 * Each request bounds the offset (server − client) from both sides (see ClockOffsetSample). With a constant offset,
 * every request's bounds hold at once, so their intersection [max lower, min upper] holds it too: its width is set by
 * the fastest round trips in each direction, not by the typical one, which is why thousands of queued requests still
 * pin the offset to the loopback or network round trip of the quickest few. The midpoint is the estimate, exact when
 * the network delay is the same both ways (the assumption every two-way time transfer makes; a fixed asymmetry biases it
 * by half the difference and cannot be seen from either end).
 *
 * Over a long run the offset drifts (crystal error, NTP slewing one host). Then the intersection of all requests
 * narrows and finally empties, so the run is cut into windows, each window's intersection gives a point, and a line
 * through the points gives the drift. The line is accepted when every request's bounds, detrended by it, still
 * intersect. A run whose bounds fit neither model (a clock step) is reported as inconsistent, with an estimate from the
 * fastest requests alone.
 */

export interface EstimateOptions {
  /** Fewer usable requests than this give no estimate (default 5). */
  minimumSamples?: number;
  /** Length of the windows that follow drift (default 30 s). */
  windowSeconds?: Seconds;
  /** A window needs this many requests to give a point (default 10); shorter ones join the next. */
  minimumWindowSamples?: number;
}

export interface OffsetFit {
  model: ClockOffsetModel;
  /** The offset at `referenceTime` (seconds, server − client). */
  offsetSeconds: Seconds;
  /** Offset change per second of client time (0 for the constant model). */
  driftPerSecond: number;
  referenceTime: EpochSeconds;
  /** The last request's client instant: the fit describes the clock from `referenceTime` to here. */
  lastTime: EpochSeconds;
  /** Half the width of the bounds the estimate rests on (seconds). */
  uncertaintySeconds: Seconds;
  /** Whether every request's bounds agree with the model. */
  consistent: boolean;
  used: number;
  rejected: number;
}

export interface InsufficientSamples {
  model: null;
  used: number;
  rejected: number;
}

/** Bounds tolerated as float noise when deciding that a request contradicts itself (1 µs). */
const FLOAT_TOLERANCE_SECONDS = 1e-6;

/** The offset the fit gives at a client instant. */
export function offsetAt(fit: OffsetFit, time: EpochSeconds): Seconds {
  return fit.offsetSeconds + fit.driftPerSecond * (time - fit.referenceTime);
}

interface Interval {
  lower: number;
  upper: number;
}

/** The intersection of the samples' bounds after removing `drift` × (time − reference). */
function intersect(samples: readonly ClockOffsetSample[], drift: number, reference: number, from = 0, to = samples.length): Interval {
  let lower = -Infinity;
  let upper = Infinity;
  for (let index = from; index < to; index++) {
    const sample = samples[index] as ClockOffsetSample;
    const trend = drift * (sample.time - reference);
    if (sample.lower - trend > lower) lower = sample.lower - trend;
    if (sample.upper - trend < upper) upper = sample.upper - trend;
  }
  return { lower, upper };
}

function isConsistent(interval: Interval): boolean {
  return interval.lower <= interval.upper + FLOAT_TOLERANCE_SECONDS;
}

/** Windows of about `windowSeconds` holding at least `minimum` samples each, as [from, to) index pairs. */
function windowsOf(samples: readonly ClockOffsetSample[], windowSeconds: number, minimum: number): Array<[number, number]> {
  const windows: Array<[number, number]> = [];
  let from = 0;
  for (let index = 0; index < samples.length; index++) {
    const elapsed = (samples[index] as ClockOffsetSample).time - (samples[from] as ClockOffsetSample).time;
    if (elapsed >= windowSeconds && index - from >= minimum) {
      windows.push([from, index]);
      from = index;
    }
  }
  if (samples.length - from >= minimum || windows.length === 0) windows.push([from, samples.length]);
  else (windows[windows.length - 1] as [number, number])[1] = samples.length;
  return windows;
}

/** Weighted least-squares slope of the windows' midpoints against their mean times (weights 1 / width²). */
function slopeThroughWindows(samples: readonly ClockOffsetSample[], windows: ReadonlyArray<[number, number]>): number | null {
  const points: Array<{ time: number; offset: number; weight: number }> = [];
  for (const [from, to] of windows) {
    const interval = intersect(samples, 0, 0, from, to);
    if (!isConsistent(interval)) continue;
    let timeSum = 0;
    for (let index = from; index < to; index++) timeSum += (samples[index] as ClockOffsetSample).time;
    const halfWidth = Math.max((interval.upper - interval.lower) / 2, FLOAT_TOLERANCE_SECONDS);
    points.push({ time: timeSum / (to - from), offset: (interval.lower + interval.upper) / 2, weight: 1 / (halfWidth * halfWidth) });
  }
  if (points.length < 2) return null;
  let weightSum = 0;
  let timeMean = 0;
  let offsetMean = 0;
  for (const point of points) {
    weightSum += point.weight;
    timeMean += point.weight * point.time;
    offsetMean += point.weight * point.offset;
  }
  timeMean /= weightSum;
  offsetMean /= weightSum;
  let covariance = 0;
  let variance = 0;
  for (const point of points) {
    covariance += point.weight * (point.time - timeMean) * (point.offset - offsetMean);
    variance += point.weight * (point.time - timeMean) ** 2;
  }
  return variance > 0 ? covariance / variance : null;
}

/**
 * When no model holds: the median midpoint of the tightest tenth of the requests (at least `minimum`), and the median
 * half-width of those as its uncertainty, widened by how far their midpoints scatter.
 */
function fastestRequestsEstimate(samples: readonly ClockOffsetSample[], minimum: number): { offset: number; uncertainty: number } {
  const byWidth = [...samples].sort((a, b) => a.upper - a.lower - (b.upper - b.lower));
  const fastest = byWidth.slice(0, Math.max(minimum, Math.ceil(samples.length / 10)));
  const midpoints = fastest.map((sample) => (sample.lower + sample.upper) / 2).sort((a, b) => a - b);
  const halfWidths = fastest.map((sample) => (sample.upper - sample.lower) / 2).sort((a, b) => a - b);
  const median = (values: number[]): number => values[Math.floor(values.length / 2)] as number;
  const offset = median(midpoints);
  const scatter = Math.max(...midpoints.map((value) => Math.abs(value - offset)));
  return { offset, uncertainty: Math.max(median(halfWidths), scatter) };
}

/** Estimates one server's clock offset from its requests' bounds (see the module comment). */
export function estimateClockOffset(samples: readonly ClockOffsetSample[], options: EstimateOptions = {}): OffsetFit | InsufficientSamples {
  const minimumSamples = options.minimumSamples ?? 5;
  const windowSeconds = options.windowSeconds ?? 30;
  const minimumWindowSamples = options.minimumWindowSamples ?? 10;

  const usable: ClockOffsetSample[] = [];
  let rejected = 0;
  for (const sample of samples) {
    if (!Number.isFinite(sample.lower) || !Number.isFinite(sample.upper) || !Number.isFinite(sample.time)) continue;
    // Server time between its two instants longer than the client's own round trip: the instants cannot both be right.
    if (sample.lower > sample.upper + FLOAT_TOLERANCE_SECONDS) rejected++;
    else usable.push(sample);
  }
  if (usable.length < minimumSamples) return { model: null, used: usable.length, rejected };
  usable.sort((a, b) => a.time - b.time);
  const reference = (usable[0] as ClockOffsetSample).time;
  const lastTime = (usable[usable.length - 1] as ClockOffsetSample).time;
  const fit = (model: ClockOffsetModel, drift: number, interval: Interval): OffsetFit => ({
    model,
    offsetSeconds: (interval.lower + interval.upper) / 2,
    driftPerSecond: drift,
    referenceTime: reference,
    lastTime,
    uncertaintySeconds: Math.max(0, (interval.upper - interval.lower) / 2),
    consistent: true,
    used: usable.length,
    rejected,
  });

  const constant = intersect(usable, 0, reference);
  const span = lastTime - reference;
  let linear: OffsetFit | null = null;
  if (span >= 2 * windowSeconds) {
    const drift = slopeThroughWindows(usable, windowsOf(usable, windowSeconds, minimumWindowSamples));
    if (drift !== null) {
      const detrended = intersect(usable, drift, reference);
      if (isConsistent(detrended)) linear = fit('linear', drift, detrended);
    }
  }
  if (isConsistent(constant)) {
    const constantFit = fit('constant', 0, constant);
    // Drift is followed only where it pays: a line that narrows the bounds to under half the constant model's.
    return linear !== null && linear.uncertaintySeconds < constantFit.uncertaintySeconds / 2 ? linear : constantFit;
  }
  if (linear !== null) return linear;
  const fallback = fastestRequestsEstimate(usable, minimumSamples);
  return {
    model: 'constant',
    offsetSeconds: fallback.offset,
    driftPerSecond: 0,
    referenceTime: reference,
    lastTime,
    uncertaintySeconds: fallback.uncertainty,
    consistent: false,
    used: usable.length,
    rejected,
  };
}
