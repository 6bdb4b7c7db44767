import { join } from 'node:path';
import type { RequestRecord } from '../../types/record.js';
import type { ReportContext, Reporter } from '../../types/reporter.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import { INTER_TOKEN_LATENCIES_KEY, RECORD_COLUMNS } from '../record-columns.js';
import { decimalOfUnits, formatSeconds } from '../csv/csv-format.js';
import { roundToMicroseconds } from '../relative-time.js';

export const REQUESTS_JSONL = 'requests.jsonl';

/**
 * The whole record as one JSON object with the CSV's column names: times in seconds after t0 (microseconds), the
 * per-token gaps under `inter_token_latencies` (seconds, nanosecond-rounded). Absent fields are left out.
 */
export function recordToJsonObject(record: RequestRecord, t0: number): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const column of RECORD_COLUMNS) {
    const value = record[column.field];
    if (value === undefined) continue;
    object[column.column] = column.kind === 'time' ? roundToMicroseconds((value as number) - t0) : value;
  }
  if (record.interTokenLatencies) {
    object[INTER_TOKEN_LATENCIES_KEY] = record.interTokenLatencies.map((gap) => Math.round(gap * 1e9) / 1e9);
  }
  return object;
}

/** The inverse of `recordToJsonObject`: epoch times again (t0 added back). */
export function recordFromJsonObject(object: Record<string, unknown>, t0: number): RequestRecord {
  const record: Record<string, unknown> = { warmup: false };
  for (const column of RECORD_COLUMNS) {
    const value = object[column.column];
    if (value === undefined || value === null) continue;
    record[column.field] = column.kind === 'time' ? (value as number) + t0 : value;
  }
  const gaps = object[INTER_TOKEN_LATENCIES_KEY];
  if (Array.isArray(gaps)) record.interTokenLatencies = gaps as number[];
  return record as unknown as RequestRecord;
}

/**
 * Gives a record, in place, exactly the values it will have when read back from requests.jsonl: times become t0 plus
 * their offset rounded to the microsecond, gaps are rounded to the nanosecond, and numbers JSON cannot hold are left
 * out. A run analyses its records after this, so that `servelab report DIR` (which can only read the file) rewrites
 * every file bit for bit. (`micros / 1e6` is the double nearest the decimal text written, as parsing it gives.)
 */
export function canonicalizeRecord(record: RequestRecord, t0: number): void {
  const fields = record as unknown as Record<string, unknown>;
  for (const column of RECORD_COLUMNS) {
    const value = fields[column.field];
    if (typeof value !== 'number') continue;
    if (!Number.isFinite(value)) delete fields[column.field];
    else if (column.kind === 'time') fields[column.field] = Math.round((value - t0) * 1e6) / 1e6 + t0;
  }
  const gaps = record.interTokenLatencies;
  if (gaps !== undefined) {
    for (let index = 0; index < gaps.length; index++) gaps[index] = Math.round((gaps[index] as number) * 1e9) / 1e9;
  }
}

const CHUNK_RECORDS = 4096;

/** JSON text of a number as our files write it: non-finite numbers (which JSON lacks) as null. */
function jsonNumber(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

/**
 * Seconds rounded to the nanosecond as JSON text, from integer arithmetic: converting a double to its shortest decimal
 * text is the slowest part of writing a million records with sixteen gaps each, converting an integer is not.
 */
export function formatNanoseconds(seconds: number): string {
  const nanos = Math.round(seconds * 1e9);
  // A gap so large that its nanoseconds overflow is not a measurement either.
  return Number.isFinite(nanos) ? decimalOfUnits(nanos, 1e9, 9) : 'null';
}

/** A time field as JSON text: seconds after t0 to the microsecond, null where not finite. */
function timeJson(value: number, t0: number): string {
  const text = formatSeconds(value - t0);
  return text === '' ? 'null' : text;
}

/** Any other field as JSON text: numbers as our files write them, the rest as JSON.stringify does. */
function scalarJson(value: unknown): string {
  return typeof value === 'number' ? jsonNumber(value) : JSON.stringify(value);
}

/**
 * The same object as `JSON.stringify(recordToJsonObject(record, t0))`, built as text directly (a test checks they
 * agree, key order included), with times and gaps formatted from integers. Fields are read by name, in the order of
 * RECORD_COLUMNS (a test checks every column is written, in that order), not by a loop over the column descriptors:
 * that loop's one lookup site for every field cost most of the 11 µs a record took, and this runs for every request
 * as it finishes (the run journal) and again for every request at the end.
 */
export function recordToJsonLine(record: RequestRecord, t0: number): string {
  // Every field starts with a comma; the first one's is dropped at the end.
  let text = '';
  if (record.requestId !== undefined) text += `,"request_id":${scalarJson(record.requestId)}`;
  if (record.scheduledTime !== undefined) text += `,"scheduled_time":${timeJson(record.scheduledTime, t0)}`;
  if (record.arrivalTime !== undefined) text += `,"arrival_time":${timeJson(record.arrivalTime, t0)}`;
  if (record.routerSendTime !== undefined) text += `,"router_send_time":${timeJson(record.routerSendTime, t0)}`;
  if (record.serverCreatedTime !== undefined) text += `,"server_created_time":${timeJson(record.serverCreatedTime, t0)}`;
  if (record.queueTimeStart !== undefined) text += `,"queue_time_start":${timeJson(record.queueTimeStart, t0)}`;
  if (record.queueTimeEnd !== undefined) text += `,"queue_time_end":${timeJson(record.queueTimeEnd, t0)}`;
  if (record.serverFirstTokenTime !== undefined) text += `,"server_first_token_time":${timeJson(record.serverFirstTokenTime, t0)}`;
  if (record.firstTokenTime !== undefined) text += `,"first_token_time":${timeJson(record.firstTokenTime, t0)}`;
  if (record.finishTime !== undefined) text += `,"finish_time":${timeJson(record.finishTime, t0)}`;
  if (record.host !== undefined) text += `,"host":${scalarJson(record.host)}`;
  if (record.inputLength !== undefined) text += `,"input_length":${scalarJson(record.inputLength)}`;
  if (record.expectedOutputLength !== undefined) text += `,"expected_output_length":${scalarJson(record.expectedOutputLength)}`;
  if (record.actualPromptTokens !== undefined) text += `,"actual_prompt_tokens":${scalarJson(record.actualPromptTokens)}`;
  if (record.actualOutputTokens !== undefined) text += `,"actual_output_tokens":${scalarJson(record.actualOutputTokens)}`;
  if (record.cachedTokens !== undefined) text += `,"cached_tokens":${scalarJson(record.cachedTokens)}`;
  if (record.prefixGroup !== undefined) text += `,"prefix_group":${scalarJson(record.prefixGroup)}`;
  if (record.sessionId !== undefined) text += `,"session_id":${scalarJson(record.sessionId)}`;
  if (record.datasetIndex !== undefined) text += `,"dataset_index":${scalarJson(record.datasetIndex)}`;
  if (record.success !== undefined) text += `,"success":${scalarJson(record.success)}`;
  if (record.error !== undefined) text += `,"error":${scalarJson(record.error)}`;
  if (record.httpStatus !== undefined) text += `,"http_status":${scalarJson(record.httpStatus)}`;
  if (record.numRetractions !== undefined) text += `,"num_retractions":${scalarJson(record.numRetractions)}`;
  if (record.retries !== undefined) text += `,"retries":${scalarJson(record.retries)}`;
  if (record.finishReason !== undefined) text += `,"finish_reason":${scalarJson(record.finishReason)}`;
  if (record.errorMessage !== undefined) text += `,"error_message":${scalarJson(record.errorMessage)}`;
  if (record.dispatchTime !== undefined) text += `,"dispatch_time":${timeJson(record.dispatchTime, t0)}`;
  if (record.heldForConcurrency !== undefined) text += `,"held_for_concurrency":${scalarJson(record.heldForConcurrency)}`;
  if (record.serverDispatchTime !== undefined) text += `,"server_dispatch_time":${timeJson(record.serverDispatchTime, t0)}`;
  if (record.serverResponseSentTime !== undefined) text += `,"server_response_sent_time":${timeJson(record.serverResponseSentTime, t0)}`;
  if (record.serverFinishTime !== undefined) text += `,"server_finish_time":${timeJson(record.serverFinishTime, t0)}`;
  if (record.prefillWaitingLatency !== undefined) text += `,"prefill_waiting_latency_s":${scalarJson(record.prefillWaitingLatency)}`;
  if (record.prefillLaunchLatency !== undefined) text += `,"prefill_launch_latency_s":${scalarJson(record.prefillLaunchLatency)}`;
  if (record.decodeThroughputTokensPerSecond !== undefined) text += `,"decode_throughput_tok_s":${scalarJson(record.decodeThroughputTokensPerSecond)}`;
  if (record.serverStatusCode !== undefined) text += `,"server_status_code":${scalarJson(record.serverStatusCode)}`;
  if (record.dataQuality !== undefined) text += `,"data_quality":${scalarJson(record.dataQuality)}`;
  if (record.outputTokensFromTrace !== undefined) text += `,"output_tokens_from_trace":${scalarJson(record.outputTokensFromTrace)}`;
  const gaps = record.interTokenLatencies;
  if (gaps) {
    text += `,"${INTER_TOKEN_LATENCIES_KEY}":[`;
    for (let index = 0; index < gaps.length; index++) text += index === 0 ? formatNanoseconds(gaps[index] as number) : `,${formatNanoseconds(gaps[index] as number)}`;
    text += ']';
  }
  return `{${text.slice(1)}}\n`;
}

function* requestsJsonLines(records: readonly RequestRecord[], t0: number): Generator<string> {
  for (let from = 0; from < records.length; from += CHUNK_RECORDS) {
    const lines: string[] = [];
    const to = Math.min(records.length, from + CHUNK_RECORDS);
    for (let index = from; index < to; index++) {
      const record = records[index] as RequestRecord;
      if (!record.warmup) lines.push(recordToJsonLine(record, t0));
    }
    yield lines.join('');
  }
}

/** `requests.jsonl`: the full record of every request, one JSON object a line. */
export const jsonlReporter: Reporter = {
  name: 'jsonl',
  async write(context: ReportContext): Promise<string[]> {
    const path = join(context.outputDirectory, REQUESTS_JSONL);
    // The records as measured: server instants on the server's own clock, so a re-analysis corrects them again.
    await writeFileAtomic(path, requestsJsonLines(context.run.rawRecords ?? context.run.records, context.run.info.startTime));
    return [path];
  },
};
