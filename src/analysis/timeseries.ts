import type { RequestRecord } from '../types/record.js';
import type { ConcurrencyStage, LittlesLawCheck, StageConcurrency } from '../types/summary.js';
import type { EpochSeconds, Seconds } from '../types/time.js';
import { Float64Arena } from './float-arena.js';
import { checkLittlesLaw, steadyWindowOf } from './littles-law.js';
import { measuredRecords } from './measured-records.js';

export const CONCURRENCY_STAGES: readonly ConcurrencyStage[] = ['in_system', 'in_router', 'waiting_in_server_queue', 'running'];

export interface Intervals {
  starts: Float64Array;
  ends: Float64Array;
}

/** The stage intervals of the records that have both ends (and end no earlier than they start). */
export function collectIntervals(
  records: readonly RequestRecord[],
  start: (record: RequestRecord) => number | undefined,
  end: (record: RequestRecord) => number | undefined,
): Intervals {
  const starts = new Float64Array(records.length);
  const ends = new Float64Array(records.length);
  let count = 0;
  for (const record of records) {
    const startTime = start(record);
    const endTime = end(record);
    if (startTime === undefined || endTime === undefined || endTime < startTime) continue;
    starts[count] = startTime;
    ends[count] = endTime;
    count++;
  }
  return { starts: starts.subarray(0, count), ends: ends.subarray(0, count) };
}

/** Arrival-ordered records give sorted starts already: checking costs one pass, sorting a million values far more. */
function sortIfNeeded(values: Float64Array): Float64Array {
  for (let index = 1; index < values.length; index++) {
    if ((values[index] as number) < (values[index - 1] as number)) return values.sort();
  }
  return values;
}

/**
 * Where each stage of a request's lifecycle starts and ends: in_system [arrival_time, finish_time), in_router
 * [arrival_time, router_send_time), waiting_in_server_queue [queue_time_start, queue_time_end), running
 * [queue_time_end, finish_time). Intervals are half-open: a request that ends at the instant another starts is never
 * counted twice. `running` starts on the server's clock and ends on the client's (the only end the record has); on one
 * host the two clocks agree. A record lacking either end of a stage (or ending before it starts) is left out of it.
 *
 * The intervals of every stage in one pass over the records (each timestamp read once, no per-record callbacks: with a
 * million records, callbacks returning numbers cost more than the sweep itself).
 */
export function collectStageIntervals(records: readonly RequestRecord[], arena?: Float64Arena): Record<ConcurrencyStage, Intervals> {
  const count = records.length;
  // One allocation for all eight columns (see Float64Arena).
  const space = arena ?? new Float64Arena(8 * count);
  const make = (): { starts: Float64Array; ends: Float64Array; length: number } => ({ starts: space.take(count), ends: space.take(count), length: 0 });
  const inSystem = make();
  const inRouter = make();
  const waiting = make();
  const running = make();
  const add = (target: { starts: Float64Array; ends: Float64Array; length: number }, start: number | undefined, end: number | undefined): void => {
    if (start === undefined || end === undefined || end < start) return;
    target.starts[target.length] = start;
    target.ends[target.length] = end;
    target.length++;
  };
  for (let index = 0; index < count; index++) {
    const record = records[index] as RequestRecord;
    const arrival = record.arrivalTime;
    const finish = record.finishTime;
    const queueEnd = record.queueTimeEnd;
    add(inSystem, arrival, finish);
    add(inRouter, arrival, record.routerSendTime);
    add(waiting, record.queueTimeStart, queueEnd);
    add(running, queueEnd, finish);
  }
  const trim = (target: { starts: Float64Array; ends: Float64Array; length: number }): Intervals => ({
    starts: target.starts.subarray(0, target.length),
    ends: target.ends.subarray(0, target.length),
  });
  return { in_system: trim(inSystem), in_router: trim(inRouter), waiting_in_server_queue: trim(waiting), running: trim(running) };
}

export interface SweepResult {
  /** Highest number of intervals open at once inside the window. */
  peak: number;
  /** ∫ count dt over the window (request-seconds). */
  integral: number;
  /** Per bin (when a bin width was given): time-weighted mean count and the peak count. */
  binMeans?: Float64Array;
  binPeaks?: Float64Array;
}

/**
 * Sweeps the start and end events in time order, keeping the open count, and integrates it over [windowStart,
 * windowEnd). With `binWidth`, it also spreads the integral over bins of that width. O(n log n + bins).
 * Sorts `intervals.starts` and `intervals.ends` in place (each separately): pass arrays you own.
 */
export function sweepIntervals(intervals: Intervals, windowStart: number, windowEnd: number, binWidth?: number): SweepResult {
  const starts = sortIfNeeded(intervals.starts);
  const ends = sortIfNeeded(intervals.ends);
  const binCount = binWidth !== undefined && binWidth > 0 ? Math.max(1, Math.ceil((windowEnd - windowStart) / binWidth)) : 0;
  const binIntegrals = binCount > 0 ? new Float64Array(binCount) : undefined;
  const binPeaks = binCount > 0 ? new Float64Array(binCount) : undefined;

  let open = 0;
  let peak = 0;
  let integral = 0;
  let previousTime = windowStart;
  let startIndex = 0;
  let endIndex = 0;
  const width = binWidth ?? 0;

  // One loop without helper closures: a closure made per call is a new call target each call, and the optimised code
  // of this function (a few hundred milliseconds to compile) was thrown away and compiled again on every call.
  while (startIndex < starts.length || endIndex < ends.length) {
    const nextStart = startIndex < starts.length ? (starts[startIndex] as number) : Number.POSITIVE_INFINITY;
    const nextEnd = endIndex < ends.length ? (ends[endIndex] as number) : Number.POSITIVE_INFINITY;
    // Ends first at equal times: half-open intervals.
    const isEnd = nextEnd <= nextStart;
    const time = isEnd ? nextEnd : nextStart;
    // Adds `open` requests held from previousTime to time, clipped to the window, to the totals and bins.
    const from = Math.max(previousTime, windowStart);
    const to = Math.min(time, windowEnd);
    if (to > from && open > 0) {
      integral += open * (to - from);
      if (binIntegrals && binPeaks) {
        let bin = Math.min(binCount - 1, Math.max(0, Math.floor((from - windowStart) / width)));
        let cursor = from;
        while (cursor < to) {
          const binEnd = Math.min(to, windowStart + (bin + 1) * width);
          binIntegrals[bin] = (binIntegrals[bin] as number) + open * (binEnd - cursor);
          if (open > (binPeaks[bin] as number)) binPeaks[bin] = open;
          cursor = binEnd;
          bin++;
          if (bin >= binCount) break;
        }
      }
    }
    if (time > previousTime) previousTime = time;
    if (isEnd) {
      open--;
      endIndex++;
    } else {
      open++;
      startIndex++;
      if (nextStart < windowEnd && open > peak) peak = open;
      if (binPeaks && nextStart < windowEnd) {
        const bin = Math.min(binCount - 1, Math.max(0, Math.floor((nextStart - windowStart) / width)));
        if (open > (binPeaks[bin] as number)) binPeaks[bin] = open;
      }
    }
  }
  const result: SweepResult = { peak, integral };
  if (binIntegrals && binPeaks) {
    const binMeans = new Float64Array(binCount);
    for (let bin = 0; bin < binCount; bin++) {
      const binStart = windowStart + bin * (binWidth as number);
      const width = Math.min(binWidth as number, windowEnd - binStart);
      binMeans[bin] = width > 0 ? (binIntegrals[bin] as number) / width : 0;
    }
    result.binMeans = binMeans;
    result.binPeaks = binPeaks;
  }
  return result;
}

/** The analysis window: first arrival to last finish, as the summary's duration. Null when it is empty. */
export function analysisWindow(
  records: readonly RequestRecord[],
): { start: EpochSeconds; end: EpochSeconds; firstArrival: EpochSeconds; lastArrival: EpochSeconds } | null {
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  let lastArrival = Number.NEGATIVE_INFINITY;
  for (const record of records) {
    const arrival = record.arrivalTime;
    if (arrival !== undefined) {
      if (arrival < start) start = arrival;
      if (arrival > lastArrival) lastArrival = arrival;
    }
    if (record.finishTime !== undefined && record.finishTime > end) end = record.finishTime;
  }
  return end > start ? { start, end, firstArrival: start, lastArrival } : null;
}

function describeStage(intervals: Intervals, windowStart: number, windowEnd: number, sweep: SweepResult, littlesLaw: LittlesLawCheck): StageConcurrency {
  const windowSeconds = windowEnd - windowStart;
  const count = intervals.starts.length;
  let entries = 0;
  let residence = 0;
  for (let index = 0; index < count; index++) {
    const start = intervals.starts[index] as number;
    if (start >= windowStart && start < windowEnd) entries++;
    residence += (intervals.ends[index] as number) - start;
  }
  const timeWeightedMean = sweep.integral / windowSeconds;
  const entryRate = entries / windowSeconds;
  const meanResidenceSeconds = count > 0 ? residence / count : null;
  // Over this whole window (first arrival to last finish) λW = L is an identity, so it is no check: the check is
  // made over the steady window instead (littles-law.ts).
  return { peak: sweep.peak, timeWeightedMean, entryRate, meanResidenceSeconds, littlesLaw };
}

/** Peak, time-weighted mean and Little's-law check of every stage that has records with both of its timestamps. */
export function summarizeStages(records: readonly RequestRecord[], arena?: Float64Arena): Partial<Record<ConcurrencyStage, StageConcurrency>> {
  return analyzeStages(records, arena).stages;
}

/** Concurrency and event counts in fixed-width bins over the analysis window. */
export interface ConcurrencyTimeSeries {
  /** Epoch time of the first bin's start (the first arrival). */
  windowStart: EpochSeconds;
  resolutionSeconds: Seconds;
  binCount: number;
  /** Per stage present in the records: time-weighted mean and peak count per bin. */
  stages: Partial<Record<ConcurrencyStage, { mean: Float64Array; peak: Float64Array }>>;
  /** Requests that arrived in each bin. */
  arrivals: Float64Array;
  /** Requests that finished successfully in each bin. */
  completions: Float64Array;
  /** Requests that failed in each bin (at their finish time, else their arrival time). */
  failures: Float64Array;
  /** Output tokens of requests that finished successfully in each bin. */
  outputTokens: Float64Array;
}

/** Picks a resolution giving at most about `maxBins` bins, rounded to 1, 2 or 5 × a power of ten seconds. */
export function defaultResolutionSeconds(windowSeconds: number, maxBins = 600): Seconds {
  const raw = Math.max(windowSeconds / maxBins, 0.001);
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  for (const step of [1, 2, 5, 10]) if (step * magnitude >= raw) return step * magnitude;
  return 10 * magnitude;
}

/** Bins the rate charts aim at over a run (between RATE_BINS/2 and RATE_BINS after rounding the width). */
export const RATE_BINS = 100;
/** The narrowest rate bin: below it, counts of a few requests per bin turn a steady rate into spikes. */
export const MIN_RATE_BIN_SECONDS = 0.5;

/**
 * Bin width for rates over time (arrivals/s, completions/s): the window over RATE_BINS, rounded up to 1, 2 or 5 × 10ⁿ
 * s and never under MIN_RATE_BIN_SECONDS (so 50–100 bins on a run longer than 50 s, fewer on a shorter one), then
 * widened so that a whole number of equal bins covers the window exactly: no short last bin whose rate would be a
 * few requests over a sliver of time. A rate over a bin is a count over the width, so narrow bins quantize it to
 * multiples of 1/width (20 req/s steps for 50 ms bins) and a steady rate looks like noise.
 */
export function rateBinning(windowSeconds: number): { binCount: number; binSeconds: Seconds } {
  if (!(windowSeconds > 0)) return { binCount: 1, binSeconds: MIN_RATE_BIN_SECONDS };
  const nominal = Math.max(MIN_RATE_BIN_SECONDS, defaultResolutionSeconds(windowSeconds, RATE_BINS));
  // Rounded down: stretching only ever widens a bin, so none is narrower than the nominal width.
  const binCount = Math.max(1, Math.floor(windowSeconds / nominal));
  return { binCount, binSeconds: windowSeconds / binCount };
}

/** Arrivals, successful completions and failures per second over the analysis window, in rateBinning's bins. */
export interface RateTimeSeries {
  /** Epoch time of the first bin's start (the first arrival). */
  windowStart: EpochSeconds;
  binSeconds: Seconds;
  binCount: number;
  /** Per bin, requests per second: arrivals (by arrival time), completions (by finish time), failures (by failure time). */
  arrivalsPerSecond: Float64Array;
  completionsPerSecond: Float64Array;
  failuresPerSecond: Float64Array;
}

/** Rates over time for the charts, from one pass over the records (warmup records are left out). */
export function rateTimeSeries(records: readonly RequestRecord[]): RateTimeSeries | null {
  const kept = measuredRecords(records);
  const window = analysisWindow(kept);
  if (!window) return null;
  const { binCount, binSeconds } = rateBinning(window.end - window.start);
  const arrivals = new Float64Array(binCount);
  const completions = new Float64Array(binCount);
  const failures = new Float64Array(binCount);
  const binOf = (time: number): number => Math.min(binCount - 1, Math.max(0, Math.floor((time - window.start) / binSeconds)));
  for (const record of kept) {
    if (record.arrivalTime !== undefined) arrivals[binOf(record.arrivalTime)]! += 1;
    if (record.success) {
      if (record.finishTime !== undefined) completions[binOf(record.finishTime)]! += 1;
    } else {
      const time = record.finishTime ?? record.arrivalTime;
      if (time !== undefined) failures[binOf(time)]! += 1;
    }
  }
  for (let bin = 0; bin < binCount; bin++) {
    arrivals[bin]! /= binSeconds;
    completions[bin]! /= binSeconds;
    failures[bin]! /= binSeconds;
  }
  return { windowStart: window.start, binSeconds, binCount, arrivalsPerSecond: arrivals, completionsPerSecond: completions, failuresPerSecond: failures };
}

type StageAnalysis = ReturnType<typeof analyzeStages>;

// The stage analysis of a run's measured records at the default resolution, by the records array (warmups included)
// it was worked out from: one sweep per stage gives both the summary's stage figures and the reporters' time series,
// whichever of summarize() and the timeseries reporter asks first.
const measuredAnalysisCache = new WeakMap<readonly RequestRecord[], StageAnalysis>();

/**
 * Collects the stage intervals once and sweeps each stage once, giving both the per-stage summary (peak, mean,
 * Little's law) and the binned time series. Warmup records must already be excluded.
 */
export function analyzeStages(
  records: readonly RequestRecord[],
  arena?: Float64Arena,
  resolutionSeconds?: Seconds,
): { stages: Partial<Record<ConcurrencyStage, StageConcurrency>>; series: ConcurrencyTimeSeries | null } {
  const window = analysisWindow(records);
  if (!window) return { stages: {}, series: null };
  const resolution = resolutionSeconds ?? defaultResolutionSeconds(window.end - window.start);
  const binCount = Math.max(1, Math.ceil((window.end - window.start) / resolution));
  const stageSummaries: Partial<Record<ConcurrencyStage, StageConcurrency>> = {};
  const stages: ConcurrencyTimeSeries['stages'] = {};
  const allIntervals = collectStageIntervals(records, arena);
  const steadyWindow = steadyWindowOf(window.firstArrival, window.lastArrival);
  for (const stage of CONCURRENCY_STAGES) {
    const intervals = allIntervals[stage];
    if (intervals.starts.length === 0) continue;
    // Before the sweep, which sorts starts and ends separately and so loses which end belongs to which start.
    const littlesLaw = checkLittlesLaw(intervals, steadyWindow);
    const sweep = sweepIntervals(intervals, window.start, window.end, resolution);
    stageSummaries[stage] = describeStage(intervals, window.start, window.end, sweep, littlesLaw);
    stages[stage] = { mean: sweep.binMeans as Float64Array, peak: sweep.binPeaks as Float64Array };
  }
  const arrivals = new Float64Array(binCount);
  const completions = new Float64Array(binCount);
  const failures = new Float64Array(binCount);
  const outputTokens = new Float64Array(binCount);
  const binOf = (time: number): number => Math.min(binCount - 1, Math.max(0, Math.floor((time - window.start) / resolution)));
  for (const record of records) {
    if (record.arrivalTime !== undefined) arrivals[binOf(record.arrivalTime)]! += 1;
    if (record.success) {
      if (record.finishTime !== undefined) {
        const bin = binOf(record.finishTime);
        completions[bin]! += 1;
        outputTokens[bin]! += record.actualOutputTokens ?? 0;
      }
    } else {
      const time = record.finishTime ?? record.arrivalTime;
      if (time !== undefined) failures[binOf(time)]! += 1;
    }
  }
  return {
    stages: stageSummaries,
    series: { windowStart: window.start, resolutionSeconds: resolution, binCount, stages, arrivals, completions, failures, outputTokens },
  };
}

/**
 * `analyzeStages` of the measured records of `runRecords` (warmups left out) at the default resolution, worked out
 * once per records array and reused after (see measuredAnalysisCache). `arena` lends the scratch columns of the first
 * computation.
 */
export function measuredStageAnalysis(runRecords: readonly RequestRecord[], arena?: Float64Arena): StageAnalysis {
  const cached = measuredAnalysisCache.get(runRecords);
  if (cached !== undefined) return cached;
  const kept = measuredRecords(runRecords);
  const analysis = analyzeStages(kept, arena);
  measuredAnalysisCache.set(runRecords, analysis);
  return analysis;
}

/**
 * Concurrency per stage over time, reconstructed from the records at the given resolution (default: about 600 bins);
 * warmup records are left out. The default-resolution result is the run's measured stage analysis, worked out once.
 */
export function concurrencyTimeSeries(records: readonly RequestRecord[], resolutionSeconds?: Seconds): ConcurrencyTimeSeries | null {
  if (resolutionSeconds === undefined) return measuredStageAnalysis(records).series;
  const kept = measuredRecords(records);
  return analyzeStages(kept, undefined, resolutionSeconds).series;
}
