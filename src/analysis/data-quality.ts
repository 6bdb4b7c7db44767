import type { RequestRecord } from '../types/record.js';
import { SERVER_CLOCK_FIELDS, clockOffsetSampleOf } from './clock-offset/correct-run-clocks.js';
import { estimateClockOffset, offsetAt, type OffsetFit } from './clock-offset/estimate-clock-offset.js';
import type { ClockOffsetSample } from '../types/clock-offset.js';
import type { DataQualitySummary } from '../types/summary.js';
import type { EpochSeconds, Seconds } from '../types/time.js';

/**
 * What a server reported that cannot be true, left out of the records instead of stored: a timestamp outside the
 * run, two server timestamps in the wrong order (a negative duration), or a usage count no request could have.
 *
 * A screened record keeps the rest of its data and lists the fields it lost in `dataQuality`, so the summary counts
 * them (its data-quality section) and `servelab report DIR` finds the same counts again from requests.jsonl.
 */

/**
 * How far outside the run a server timestamp may lie and still be kept, once the server's clock offset is corrected
 * (correct-run-clocks.ts): rounding and what the offset estimate leaves.
 */
export const SERVER_TIME_TOLERANCE_S: Seconds = 5;
/**
 * The tolerance before clock offsets are estimated: only values no clock skew explains (1970, the year 3000, a day
 * away), so that they never reach the offset estimate, while a skewed but honest server clock is kept for it.
 */
export const GROSS_SERVER_TIME_TOLERANCE_S: Seconds = 86_400;

/**
 * The most output tokens per second a server may claim for one request's decode: a million is far past any GPU
 * (single-request decode runs at tens to a few thousand tokens per second), so a larger figure is not a measurement.
 */
export const MAX_DECODE_TOKENS_PER_SECOND = 1_000_000;
/**
 * The most times one request may have been retracted (SGLang's `num_retractions`: sent back to the queue when KV memory
 * ran out, then prefilled again). Each retraction costs a full re-prefill, so ten thousand of them for one request
 * would have taken longer than any run.
 */
export const MAX_RETRACTIONS = 10_000;

/** Two server timestamps in the wrong order by less than this are rounding (epoch doubles, microsecond files). */
const ORDER_SLACK_S: Seconds = 1e-3;

export interface RunWindow {
  /** The earliest instant a request of the run (warmup included) was scheduled or sent. */
  startTime: EpochSeconds;
  /** When the load ended. */
  endTime: EpochSeconds;
  /** Server clock minus client clock, when estimated (seconds); 0 otherwise. */
  clockOffsetS?: Seconds;
  /** Default SERVER_TIME_TOLERANCE_S. */
  toleranceS?: Seconds;
}

/** Every instant a server stamps on its own clock: the list clock correction shifts. */
const SERVER_TIME_FIELDS = SERVER_CLOCK_FIELDS;
type ServerTimeField = (typeof SERVER_CLOCK_FIELDS)[number];
/**
 * Those a server sets in this order for every request (received, handed to the scheduler, queued, scheduled, first
 * token, finished). `serverResponseSentTime` is left out: for a non-streamed request it comes after the finish.
 */
const ORDERED_SERVER_TIME_FIELDS: readonly ServerTimeField[] = [
  'serverCreatedTime',
  'serverDispatchTime',
  'queueTimeStart',
  'queueTimeEnd',
  'serverFirstTokenTime',
  'serverFinishTime',
];

/** The run's window: from the first scheduled (or sent) request, warmup included, to the load's end. */
export function runWindowOf(records: Iterable<RequestRecord>, endTime: EpochSeconds): RunWindow {
  let startTime = endTime;
  for (const record of records) {
    if (record.scheduledTime < startTime) startTime = record.scheduledTime;
    if (record.arrivalTime !== undefined && record.arrivalTime < startTime) startTime = record.arrivalTime;
  }
  return { startTime, endTime };
}

/** Screens one record in place; returns the number of fields it removed. */
export function screenRecord(record: RequestRecord, window: RunWindow): number {
  const dropped: string[] = [];
  const offset = window.clockOffsetS ?? 0;
  const tolerance = window.toleranceS ?? SERVER_TIME_TOLERANCE_S;
  const earliest = window.startTime + offset - tolerance;
  const latest = window.endTime + offset + tolerance;
  for (const field of SERVER_TIME_FIELDS) {
    const value = record[field];
    if (value === undefined) continue;
    if (!(value >= earliest && value <= latest)) {
      delete record[field];
      dropped.push(`${field}:outside_run`);
    }
  }
  // Consecutive server timestamps must not run backwards: a negative duration drops both ends (which one is wrong
  // cannot be told).
  let previous: ServerTimeField | undefined;
  for (const field of ORDERED_SERVER_TIME_FIELDS) {
    const value = record[field];
    if (value === undefined) continue;
    if (previous !== undefined && value < (record[previous] as number) - ORDER_SLACK_S) {
      delete record[previous];
      delete record[field];
      dropped.push(`${previous}:negative_duration`, `${field}:negative_duration`);
      previous = undefined;
      continue;
    }
    previous = field;
  }
  screenCount(record, 'actualOutputTokens', record.expectedOutputLength > 0 ? record.expectedOutputLength : Number.POSITIVE_INFINITY, dropped);
  // A prompt's token count depends on the server's tokenizer and template, so only a gross excess is impossible.
  screenCount(record, 'actualPromptTokens', 10 * record.inputLength + 100_000, dropped);
  screenCount(record, 'cachedTokens', record.actualPromptTokens ?? 10 * record.inputLength + 100_000, dropped);
  screenCount(record, 'numRetractions', MAX_RETRACTIONS, dropped);
  // A server-side latency is a part of the request's time on the server, so it cannot exceed the run's own length.
  const longestS = window.endTime - window.startTime + tolerance;
  screenAmount(record, 'prefillWaitingLatency', longestS, dropped);
  screenAmount(record, 'prefillLaunchLatency', longestS, dropped);
  screenAmount(record, 'decodeThroughputTokensPerSecond', MAX_DECODE_TOKENS_PER_SECOND, dropped);
  screenCount(record, 'retries', Number.POSITIVE_INFINITY, dropped);
  if (dropped.length > 0) record.dataQuality = record.dataQuality === undefined ? dropped.join(';') : `${record.dataQuality};${dropped.join(';')}`;
  return dropped.length;
}

type CountField = 'actualOutputTokens' | 'actualPromptTokens' | 'cachedTokens' | 'numRetractions' | 'retries';

function screenCount(record: RequestRecord, field: CountField, max: number, dropped: string[]): void {
  const value = record[field];
  if (value === undefined) return;
  if (!(Number.isInteger(value) && value >= 0 && value <= max)) {
    delete record[field];
    dropped.push(`${field}:impossible_count`);
  }
}

type AmountField = 'prefillWaitingLatency' | 'prefillLaunchLatency' | 'decodeThroughputTokensPerSecond';

/** A server-computed latency or rate: negative, not finite, or beyond `max` is no measurement. */
function screenAmount(record: RequestRecord, field: AmountField, max: number, dropped: string[]): void {
  const value = record[field];
  if (value === undefined) return;
  if (!(Number.isFinite(value) && value >= 0 && value <= max)) {
    delete record[field];
    dropped.push(`${field}:impossible_value`);
  }
}

/**
 * Which server's clock a record's instants are on. Before the trace is joined (the first, gross screening, right after
 * the load) a record has no host yet: those are taken together, which is one server in a node test; in a routing test
 * servers whose offsets differ then make the fit inconsistent, and nothing is moved (as before).
 */
function hostKey(record: RequestRecord): string {
  return record.host ?? '';
}

/**
 * Each server's clock offset as the run's requests bound it, where they agree on one (a consistent fit): a server whose
 * clock is days off still has every instant where its own clock put it, and those instants are screened against the
 * run window moved by that offset instead of being dropped as outside the run. Correction itself happens later
 * (correct-run-clocks.ts); this only keeps the instants alive until then.
 */
function offsetsByHost(records: Iterable<RequestRecord>): Map<string, OffsetFit> {
  const samplesByHost = new Map<string, ClockOffsetSample[]>();
  for (const record of records) {
    const sample = clockOffsetSampleOf(record);
    if (sample === undefined) continue;
    const host = hostKey(record);
    let samples = samplesByHost.get(host);
    if (samples === undefined) samplesByHost.set(host, (samples = []));
    samples.push(sample);
  }
  const fits = new Map<string, OffsetFit>();
  for (const [host, samples] of samplesByHost) {
    const fit = estimateClockOffset(samples);
    if (fit.model !== null && fit.consistent) fits.set(host, fit);
  }
  return fits;
}

/**
 * Screens every record of a run in place; returns how many fields were removed. Without a given `clockOffsetS`, each
 * server's offset is estimated from the records first, so a constant offset of any size (a server clock three days
 * off) moves the window with it rather than emptying every server instant.
 */
export function screenRecords(records: Iterable<RequestRecord>, window: RunWindow): number {
  const list = [...records];
  const fits = window.clockOffsetS === undefined ? offsetsByHost(list) : new Map<string, OffsetFit>();
  let removed = 0;
  for (const record of list) {
    const fit = fits.get(hostKey(record));
    const clockOffsetS = fit === undefined ? undefined : offsetAt(fit, record.routerSendTime ?? record.arrivalTime ?? record.scheduledTime);
    removed += screenRecord(record, clockOffsetS === undefined ? window : { ...window, clockOffsetS });
  }
  return removed;
}

export const DATA_QUALITY_RULE =
  `server timestamps more than ${SERVER_TIME_TOLERANCE_S} s outside the run (first request to end of load), ` +
  'server timestamps that run backwards (negative durations), usage counts that are negative, not whole, or beyond ' +
  `what the request allows (retractions beyond ${MAX_RETRACTIONS}), server latencies that are negative, not finite or ` +
  `longer than the run, decode throughputs beyond ${MAX_DECODE_TOKENS_PER_SECOND} tokens/s, and the output token count ` +
  'of a stream whose count went backwards are left empty';

export function summarizeDataQuality(records: Iterable<RequestRecord>): DataQualitySummary {
  const removedFields: Record<string, number> = {};
  let recordsAffected = 0;
  for (const record of records) {
    const dropped = record.dataQuality;
    if (dropped === undefined || dropped === '') continue;
    recordsAffected++;
    for (const entry of dropped.split(';')) removedFields[entry] = (removedFields[entry] ?? 0) + 1;
  }
  return { recordsAffected, removedFields, rule: DATA_QUALITY_RULE };
}
