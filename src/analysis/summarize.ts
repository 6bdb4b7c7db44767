import { nodeNamesOf, nodeUrlsOf } from './node-index.js';
import { steadyWindowOf } from './littles-law.js';
import { summarizeDataQuality } from './data-quality.js';
import { judgeLoad } from './verdict.js';
import { assessRunHarness, HARNESS_THRESHOLDS, harnessMeasurementsOf, type HarnessMetricValues } from './harness.js';
import type { RequestRecord } from '../types/record.js';
import type { RunData } from '../types/run.js';
import type {
  DerivedColumnName,
  ErrorClassSummary,
  Goodput,
  HeldLoad,
  OfferedLoad,
  SloTargets,
  Statistics,
  Summary,
  SummaryCounts,
  SummaryTokens,
} from '../types/summary.js';
import { DERIVED_COLUMN_NAMES, deriveColumnArrays } from './derive.js';
import { describeEvents } from './events.js';
import { Float64Arena } from './float-arena.js';
import { countInterTokenLatencies, pooledInterTokenLatencies } from './inter-token-gaps.js';
import { coefficientOfVariation, computeStatistics, sortedFiniteValues, statisticsInPlace } from './statistics.js';
import { PRECISION_PERCENTILES, runPrecision } from './bootstrap/run-precision.js';
import { orderPercentileBands } from './bootstrap/order-statistic-bootstrap.js';
import { succeededOnly, summarizeRouting } from './nodes.js';
import { analysisWindow, measuredStageAnalysis } from './timeseries.js';
import { measuredRecords } from './measured-records.js';
import { dataQualityCautions, withCautions } from './data-quality-cautions.js';
import { summarizePd } from './pd-analysis.js';
import { assessSentProcess, sentProcessCaution } from './sent-process.js';

export interface SummarizeOptions {
  slo?: SloTargets;
}

/**
 * Scratch columns per record the analysis takes from its arena: 14 derived, 1 statistics scratch, 8 stage intervals,
 * 3 offered load, 4 routing (host ids and order as int32, values, interval ends).
 */
const SCRATCH_COLUMNS = 30;

/** A copy of the values without NaN (a missing value), from the arena. */
function finiteValues(values: Float64Array, arena: Float64Arena): Float64Array {
  const kept = arena.take(values.length);
  let count = 0;
  for (let index = 0; index < values.length; index++) {
    const value = values[index] as number;
    if (value === value) kept[count++] = value;
  }
  return kept.subarray(0, count);
}

/** Derived columns summarized over every sent request rather than succeeded ones: they describe the load generator. */
const LOAD_GENERATOR_COLUMNS: ReadonlySet<DerivedColumnName> = new Set(['send_lag']);

function countOutcomes(records: readonly RequestRecord[]): SummaryCounts {
  const failedByClass: Record<string, number> = {};
  let succeeded = 0;
  for (const record of records) {
    if (record.success) {
      succeeded++;
    } else {
      const errorClass = record.error ?? 'unknown';
      failedByClass[errorClass] = (failedByClass[errorClass] ?? 0) + 1;
    }
  }
  return { total: records.length, succeeded, failed: records.length - succeeded, failedByClass };
}

/** Characters of an error message the summary keeps: enough to recognise it, short enough for a terminal line. */
export const ERROR_MESSAGE_CHARACTERS = 200;

/**
 * Per error class, the count and the most common message (first 200 characters; equal counts: the message seen
 * first), most frequent class first (equal counts: by name).
 */
function describeErrors(records: readonly RequestRecord[]): ErrorClassSummary[] {
  const byClass = new Map<string, { count: number; messages: Map<string, number> }>();
  for (const record of records) {
    if (record.success) continue;
    const errorClass = record.error ?? 'unknown';
    let entry = byClass.get(errorClass);
    if (!entry) {
      entry = { count: 0, messages: new Map() };
      byClass.set(errorClass, entry);
    }
    entry.count++;
    if (record.errorMessage !== undefined && record.errorMessage !== '') {
      const message = record.errorMessage.slice(0, ERROR_MESSAGE_CHARACTERS);
      entry.messages.set(message, (entry.messages.get(message) ?? 0) + 1);
    }
  }
  const summaries: ErrorClassSummary[] = [];
  for (const [errorClass, entry] of byClass) {
    let topMessage: string | null = null;
    let topMessageCount = 0;
    for (const [message, count] of entry.messages) {
      if (count > topMessageCount) {
        topMessage = message;
        topMessageCount = count;
      }
    }
    summaries.push({ class: errorClass, count: entry.count, topMessage, topMessageCount });
  }
  return summaries.sort((a, b) => b.count - a.count || (a.class < b.class ? -1 : a.class > b.class ? 1 : 0));
}

/**
 * Tokens that count in throughput, as bench_serving counts them: succeeded requests only; the prompt length the server
 * reported (bench_serving uses the dataset's length, which we fall back to) and the output tokens the server reported.
 */
function countTokens(records: readonly RequestRecord[]): SummaryTokens {
  let totalInput = 0;
  let totalOutput = 0;
  let totalCached = 0;
  for (const record of records) {
    if (!record.success) continue;
    totalInput += record.actualPromptTokens ?? record.inputLength;
    totalOutput += record.actualOutputTokens ?? 0;
    totalCached += record.cachedTokens ?? 0;
  }
  return { totalInput, totalOutput, totalCached };
}

/** (n − 1) / (last − first) over the scheduled times: the rate the arrival process actually drew. */
function scheduledRateOf(records: readonly RequestRecord[]): number | null {
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  let count = 0;
  for (const record of records) {
    const time = record.scheduledTime;
    if (!Number.isFinite(time)) continue;
    count++;
    if (time < first) first = time;
    if (time > last) last = time;
  }
  return count >= 2 && last > first ? (count - 1) / (last - first) : null;
}

/** What the harness's error bound is weighed against: each metric's p50 and p99 in ms, the mean output tokens, the send lag p50. */
function harnessValuesOf(
  latencies: Record<DerivedColumnName, Statistics | null>,
  itl: Statistics | null,
  tokens: SummaryTokens,
  succeeded: number,
  unheldLag: Statistics | null,
): HarnessMetricValues {
  const p50Ms: Record<string, number | null> = {};
  const p99Ms: Record<string, number | null> = {};
  for (const [name, statistics] of [...Object.entries(latencies), ['itl', itl] as const]) {
    p50Ms[name] = statistics === null ? null : statistics.p50 * 1000;
    p99Ms[name] = statistics === null ? null : statistics.p99 * 1000;
  }
  return { p50Ms, p99Ms, meanOutputTokens: succeeded > 0 ? tokens.totalOutput / succeeded : null, sendLagP50Ms: unheldLag === null ? null : unheldLag.p50 * 1000 };
}

/** `harnessErrorShare` from the run's settings (a share of a metric's p50), else the default. */
function harnessErrorShareOf(config: Record<string, unknown>): number {
  const share = config['harnessErrorShare'];
  return typeof share === 'number' && share > 0 ? share : HARNESS_THRESHOLDS.metric_error_share;
}

/** How much load `maxConcurrency` held back: requests held and how long they waited (dispatch − scheduled). */
function describeHeldLoad(records: readonly RequestRecord[]): HeldLoad {
  let count = 0;
  const holds: number[] = [];
  for (const record of records) {
    if (record.heldForConcurrency !== true) continue;
    count++;
    if (record.dispatchTime !== undefined) holds.push(record.dispatchTime - record.scheduledTime);
  }
  return { count, share: records.length > 0 ? count / records.length : 0, holdSeconds: computeStatistics(holds) };
}

/**
 * The run's target rate as the summary states it: null when the run has none (NaN in RunInfo, or null in a
 * summary.json read back), Infinity for all at once.
 */
export function targetRateOf(requestRate: number | null | undefined): number | null {
  return typeof requestRate === 'number' && !Number.isNaN(requestRate) ? requestRate : null;
}

function describeOfferedLoad(records: readonly RequestRecord[], targetRate: number | null, sendLag: Statistics | null, arena: Float64Arena): OfferedLoad {
  const arrivals = arena.take(records.length);
  for (let index = 0; index < records.length; index++) arrivals[index] = records[index]?.arrivalTime ?? Number.NaN;
  const sorted = sortedFiniteValues(arrivals, arena);
  let achievedRate: number | null = null;
  let interArrivalCv: number | null = null;
  if (sorted.length >= 2) {
    const span = (sorted[sorted.length - 1] as number) - (sorted[0] as number);
    if (span > 0) achievedRate = (sorted.length - 1) / span;
    const gaps = arena.take(sorted.length - 1);
    for (let index = 1; index < sorted.length; index++) gaps[index - 1] = (sorted[index] as number) - (sorted[index - 1] as number);
    interArrivalCv = coefficientOfVariation(gaps);
  }
  const achievedToTargetRatio =
    achievedRate !== null && targetRate !== null && Number.isFinite(targetRate) && targetRate > 0 ? achievedRate / targetRate : null;
  return {
    targetRate,
    scheduledRate: scheduledRateOf(records),
    achievedRate,
    achievedToTargetRatio,
    interArrivalCv,
    sendLag,
    heldForConcurrency: describeHeldLoad(records),
  };
}

/**
 * Goodput as bench_serving's SLO option defines it: a succeeded request is good when every objective given holds
 * (value ≤ target); a request with one output token counts as tpot 0. A missing measurement fails its objective.
 */
function computeGoodput(
  records: readonly RequestRecord[],
  columns: Record<DerivedColumnName, Float64Array>,
  slo: SloTargets,
  durationSeconds: number,
): Goodput {
  let goodRequests = 0;
  for (let index = 0; index < records.length; index++) {
    const record = records[index] as RequestRecord;
    if (!record.success) continue;
    if (slo.ttftMs !== undefined && !((columns.ttft[index] as number) * 1000 <= slo.ttftMs)) continue;
    if (slo.tpotMs !== undefined) {
      const tpot = (record.actualOutputTokens ?? 0) <= 1 && record.actualOutputTokens !== undefined ? 0 : (columns.tpot[index] as number);
      if (!(tpot * 1000 <= slo.tpotMs)) continue;
    }
    if (slo.totalMs !== undefined && !((columns.total_latency[index] as number) * 1000 <= slo.totalMs)) continue;
    goodRequests++;
  }
  return {
    slo,
    goodRequests,
    requestsPerSecond: durationSeconds > 0 ? goodRequests / durationSeconds : 0,
    fraction: records.length > 0 ? goodRequests / records.length : 0,
  };
}

/**
 * p99 of send lag over the requests `--max-concurrency` did not hold back: a held request's lag is the hold, which
 * the load asked for, not the client falling behind (seconds; null when none was sent).
 */
function unheldSendLag(records: readonly RequestRecord[]): Statistics | null {
  const lags: number[] = [];
  for (const record of records) {
    if (record.heldForConcurrency !== true && record.arrivalTime !== undefined) lags.push(record.arrivalTime - record.scheduledTime);
  }
  return computeStatistics(lags);
}

/** An epoch instant as seconds after t0, to the microsecond like every relative time in the files. */
function sinceT0(time: number | null, t0: number): number | null {
  return time === null ? null : Math.round((time - t0) * 1e6) / 1e6;
}

/** Per-experiment metrics of a run (docs/metrics.md). Definitions are written out in docs/metrics.md. */
export function summarize(run: RunData, options: SummarizeOptions = {}): Summary {
  const records = measuredRecords(run.records);
  const counts = countOutcomes(records);
  // Every scratch column of the analysis from one allocation: see Float64Arena (a million records need ~30 columns).
  const arena = new Float64Arena(SCRATCH_COLUMNS * records.length + countInterTokenLatencies(records));
  const columns = deriveColumnArrays(records, arena);

  let firstArrivalTime: number | null = null;
  let lastFinishTime: number | null = null;
  for (const record of records) {
    if (record.arrivalTime !== undefined && (firstArrivalTime === null || record.arrivalTime < firstArrivalTime)) {
      firstArrivalTime = record.arrivalTime;
    }
    if (record.finishTime !== undefined && (lastFinishTime === null || record.finishTime > lastFinishTime)) {
      lastFinishTime = record.finishTime;
    }
  }
  const durationSeconds =
    firstArrivalTime !== null && lastFinishTime !== null ? Math.max(0, lastFinishTime - firstArrivalTime) : 0;
  const perSecond = (amount: number): number => (durationSeconds > 0 ? amount / durationSeconds : 0);

  succeededOnly(records, columns, LOAD_GENERATOR_COLUMNS);
  const latencies = {} as Record<DerivedColumnName, Statistics | null>;
  const scratch = arena.take(records.length);
  for (const name of DERIVED_COLUMN_NAMES) latencies[name] = computeStatistics(columns[name], scratch);

  const tokens = countTokens(records);
  let sumOfLatencies = 0;
  const totalLatencies = columns.total_latency;
  for (let index = 0; index < totalLatencies.length; index++) {
    const value = totalLatencies[index] as number;
    if (value === value) sumOfLatencies += value;
  }

  const stageAnalysis = measuredStageAnalysis(run.records, arena);

  const harness = harnessMeasurementsOf(run.extras);
  const interTokenValues = pooledInterTokenLatencies(records, arena);
  const interTokenLatency = statisticsInPlace(interTokenValues);
  // A request max concurrency held back waited because the load asked it to: its lag is no harness error.
  const unheldLag = harness === undefined ? null : unheldSendLag(records);
  const sentProcess = assessSentProcess(run, records);
  const departure = sentProcessCaution(sentProcess);
  const dataQuality = withCautions(summarizeDataQuality(records), departure === undefined ? dataQualityCautions(run, records) : [...dataQualityCautions(run, records), departure]);
  const summary: Summary = {
    verdict: judgeLoad(records, run.info.startTime, targetRateOf(run.info.requestRate)),
    ...(harness === undefined
      ? {}
      : { harness: assessRunHarness(harness, unheldLag?.p99 ?? null, harnessValuesOf(latencies, interTokenLatency, tokens, counts.succeeded, unheldLag), harnessErrorShareOf(run.config), counts.failedByClass['harness_limit'] ?? 0) }),
    counts,
    errors: describeErrors(records),
    firstArrivalTime,
    lastFinishTime,
    firstArrivalSinceT0: sinceT0(firstArrivalTime, run.info.startTime),
    lastFinishSinceT0: sinceT0(lastFinishTime, run.info.startTime),
    durationSeconds,
    throughput: {
      requestsPerSecond: perSecond(counts.succeeded),
      inputTokensPerSecond: perSecond(tokens.totalInput),
      outputTokensPerSecond: perSecond(tokens.totalOutput),
      totalTokensPerSecond: perSecond(tokens.totalInput + tokens.totalOutput),
    },
    tokens,
    latencies,
    interTokenLatency,
    offeredLoad: describeOfferedLoad(records, targetRateOf(run.info.requestRate), latencies.send_lag, arena),
    concurrency: { benchServing: perSecond(sumOfLatencies), stages: stageAnalysis.stages },
    precision: runPrecision([
      ['ttftSeconds', orderPercentileBands(finiteValues(columns.ttft, arena), PRECISION_PERCENTILES)],
      ['tpotSeconds', orderPercentileBands(finiteValues(columns.tpot, arena), PRECISION_PERCENTILES)],
      ['itlSeconds', orderPercentileBands(interTokenValues, PRECISION_PERCENTILES)],
      ['totalLatencySeconds', orderPercentileBands(finiteValues(columns.total_latency, arena), PRECISION_PERCENTILES)],
    ]),
    dataQuality: sentProcess === undefined ? dataQuality : { ...dataQuality, sentProcess },
    goodput: options.slo && Object.values(options.slo).some((value) => value !== undefined)
      ? computeGoodput(records, columns, options.slo, durationSeconds)
      : null,
  };
  const nodeUrls = nodeUrlsOf(run);
  const routing = summarizeRouting(run.info.testLevel, records, columns, arena, nodeUrls, nodeNamesOf(run));
  if (routing) summary.routing = routing;
  const pd = summarizePd(records, run.info.startTime);
  if (pd !== undefined) summary.pd = pd;
  if (run.clockOffsets !== undefined) summary.clockOffsets = run.clockOffsets;
  if (run.events.length > 0 && firstArrivalTime !== null) {
    const window = analysisWindow(records);
    const steady = window === null ? null : steadyWindowOf(window.firstArrival, window.lastArrival);
    summary.events = describeEvents(records, run.events, {
      windowStart: firstArrivalTime,
      windowEnd: lastFinishTime ?? run.info.endTime,
      t0: run.info.startTime,
      steadyStart: steady?.start ?? firstArrivalTime,
      ...(nodeUrls === undefined ? {} : { nodeUrls }),
    });
  }
  return summary;
}
