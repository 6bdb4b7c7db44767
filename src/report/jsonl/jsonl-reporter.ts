import { join } from 'node:path';
import type { RequestRecord } from '../../types/record.js';
import type { ReportContext, Reporter } from '../../types/reporter.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import { INTER_TOKEN_LATENCIES_KEY, RECORD_COLUMNS } from '../record-columns.js';
import { writeSeconds } from '../csv/csv-format.js';
import { roundToMicroseconds } from '../relative-time.js';
import { asciiBytes, TextBytesWriter } from '../../utils/text-bytes-writer.js';

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

/**
 * The same object as `JSON.stringify(recordToJsonObject(record, t0))`, written as bytes (a test checks they agree, key
 * order included), with times and gaps formatted from integers. Fields are read by name, in the order of
 * RECORD_COLUMNS (a test checks every column is written, in that order), not by a loop over the column descriptors:
 * that loop's one lookup site for every field cost most of the 11 µs a record took, and this runs for every request
 * as it finishes (the run journal) and again for every request at the end.
 */
export function writeRecordJsonLine(out: TextBytesWriter, record: RequestRecord, t0: number): void {
  // Every key starts with a comma; the first field's is replaced by the opening brace.
  const first = out.length;
  if (record.requestId !== undefined) scalarField(out, KEYS.requestId, record.requestId);
  if (record.scheduledTime !== undefined) timeField(out, KEYS.scheduledTime, record.scheduledTime, t0);
  if (record.arrivalTime !== undefined) timeField(out, KEYS.arrivalTime, record.arrivalTime, t0);
  if (record.routerSendTime !== undefined) timeField(out, KEYS.routerSendTime, record.routerSendTime, t0);
  if (record.serverCreatedTime !== undefined) timeField(out, KEYS.serverCreatedTime, record.serverCreatedTime, t0);
  if (record.queueTimeStart !== undefined) timeField(out, KEYS.queueTimeStart, record.queueTimeStart, t0);
  if (record.queueTimeEnd !== undefined) timeField(out, KEYS.queueTimeEnd, record.queueTimeEnd, t0);
  if (record.serverFirstTokenTime !== undefined) timeField(out, KEYS.serverFirstTokenTime, record.serverFirstTokenTime, t0);
  if (record.firstTokenTime !== undefined) timeField(out, KEYS.firstTokenTime, record.firstTokenTime, t0);
  if (record.finishTime !== undefined) timeField(out, KEYS.finishTime, record.finishTime, t0);
  if (record.host !== undefined) scalarField(out, KEYS.host, record.host);
  if (record.inputLength !== undefined) scalarField(out, KEYS.inputLength, record.inputLength);
  if (record.expectedOutputLength !== undefined) scalarField(out, KEYS.expectedOutputLength, record.expectedOutputLength);
  if (record.actualPromptTokens !== undefined) scalarField(out, KEYS.actualPromptTokens, record.actualPromptTokens);
  if (record.actualOutputTokens !== undefined) scalarField(out, KEYS.actualOutputTokens, record.actualOutputTokens);
  if (record.cachedTokens !== undefined) scalarField(out, KEYS.cachedTokens, record.cachedTokens);
  if (record.prefixGroup !== undefined) scalarField(out, KEYS.prefixGroup, record.prefixGroup);
  if (record.sessionId !== undefined) scalarField(out, KEYS.sessionId, record.sessionId);
  if (record.datasetIndex !== undefined) scalarField(out, KEYS.datasetIndex, record.datasetIndex);
  if (record.success !== undefined) scalarField(out, KEYS.success, record.success);
  if (record.error !== undefined) scalarField(out, KEYS.error, record.error);
  if (record.httpStatus !== undefined) scalarField(out, KEYS.httpStatus, record.httpStatus);
  if (record.numRetractions !== undefined) scalarField(out, KEYS.numRetractions, record.numRetractions);
  if (record.retries !== undefined) scalarField(out, KEYS.retries, record.retries);
  if (record.finishReason !== undefined) scalarField(out, KEYS.finishReason, record.finishReason);
  if (record.errorMessage !== undefined) scalarField(out, KEYS.errorMessage, record.errorMessage);
  if (record.dispatchTime !== undefined) timeField(out, KEYS.dispatchTime, record.dispatchTime, t0);
  if (record.heldForConcurrency !== undefined) scalarField(out, KEYS.heldForConcurrency, record.heldForConcurrency);
  if (record.serverDispatchTime !== undefined) timeField(out, KEYS.serverDispatchTime, record.serverDispatchTime, t0);
  if (record.serverResponseSentTime !== undefined) timeField(out, KEYS.serverResponseSentTime, record.serverResponseSentTime, t0);
  if (record.serverFinishTime !== undefined) timeField(out, KEYS.serverFinishTime, record.serverFinishTime, t0);
  if (record.prefillWaitingLatency !== undefined) scalarField(out, KEYS.prefillWaitingLatency, record.prefillWaitingLatency);
  if (record.prefillLaunchLatency !== undefined) scalarField(out, KEYS.prefillLaunchLatency, record.prefillLaunchLatency);
  if (record.decodeThroughputTokensPerSecond !== undefined) scalarField(out, KEYS.decodeThroughputTokensPerSecond, record.decodeThroughputTokensPerSecond);
  if (record.serverStatusCode !== undefined) scalarField(out, KEYS.serverStatusCode, record.serverStatusCode);
  if (record.dataQuality !== undefined) scalarField(out, KEYS.dataQuality, record.dataQuality);
  if (record.outputTokensFromTrace !== undefined) scalarField(out, KEYS.outputTokensFromTrace, record.outputTokensFromTrace);
  const gaps = record.interTokenLatencies;
  if (gaps) {
    out.bytes(GAPS_KEY);
    for (let index = 0; index < gaps.length; index++) {
      if (index > 0) out.byte(COMMA);
      nanosecondsField(out, gaps[index] as number);
    }
    out.byte(CLOSE_BRACKET);
  }
  // The first field's comma becomes the opening brace; a record without fields is `{}`.
  if (out.length === first) out.byte(OPEN_BRACE);
  else out.setByteAt(first, OPEN_BRACE);
  out.byte(CLOSE_BRACE);
  out.byte(NEWLINE);
}

const KEYS = {
  requestId: asciiBytes(',"request_id":'),
  scheduledTime: asciiBytes(',"scheduled_time":'),
  arrivalTime: asciiBytes(',"arrival_time":'),
  routerSendTime: asciiBytes(',"router_send_time":'),
  serverCreatedTime: asciiBytes(',"server_created_time":'),
  queueTimeStart: asciiBytes(',"queue_time_start":'),
  queueTimeEnd: asciiBytes(',"queue_time_end":'),
  serverFirstTokenTime: asciiBytes(',"server_first_token_time":'),
  firstTokenTime: asciiBytes(',"first_token_time":'),
  finishTime: asciiBytes(',"finish_time":'),
  host: asciiBytes(',"host":'),
  inputLength: asciiBytes(',"input_length":'),
  expectedOutputLength: asciiBytes(',"expected_output_length":'),
  actualPromptTokens: asciiBytes(',"actual_prompt_tokens":'),
  actualOutputTokens: asciiBytes(',"actual_output_tokens":'),
  cachedTokens: asciiBytes(',"cached_tokens":'),
  prefixGroup: asciiBytes(',"prefix_group":'),
  sessionId: asciiBytes(',"session_id":'),
  datasetIndex: asciiBytes(',"dataset_index":'),
  success: asciiBytes(',"success":'),
  error: asciiBytes(',"error":'),
  httpStatus: asciiBytes(',"http_status":'),
  numRetractions: asciiBytes(',"num_retractions":'),
  retries: asciiBytes(',"retries":'),
  finishReason: asciiBytes(',"finish_reason":'),
  errorMessage: asciiBytes(',"error_message":'),
  dispatchTime: asciiBytes(',"dispatch_time":'),
  heldForConcurrency: asciiBytes(',"held_for_concurrency":'),
  serverDispatchTime: asciiBytes(',"server_dispatch_time":'),
  serverResponseSentTime: asciiBytes(',"server_response_sent_time":'),
  serverFinishTime: asciiBytes(',"server_finish_time":'),
  prefillWaitingLatency: asciiBytes(',"prefill_waiting_latency_s":'),
  prefillLaunchLatency: asciiBytes(',"prefill_launch_latency_s":'),
  decodeThroughputTokensPerSecond: asciiBytes(',"decode_throughput_tok_s":'),
  serverStatusCode: asciiBytes(',"server_status_code":'),
  dataQuality: asciiBytes(',"data_quality":'),
  outputTokensFromTrace: asciiBytes(',"output_tokens_from_trace":'),
} as const;

/** `recordToJsonLine`'s scratch: one line at a time. */
const lineWriter = new TextBytesWriter(8192);

/** One record's line of requests.jsonl, as text (the writers themselves write bytes: `writeRecordJsonLine`). */
export function recordToJsonLine(record: RequestRecord, t0: number): string {
  writeRecordJsonLine(lineWriter, record, t0);
  return lineWriter.takeText();
}

const GAPS_KEY = asciiBytes(`,"${INTER_TOKEN_LATENCIES_KEY}":[`);
const NULL = asciiBytes('null');
const TRUE = asciiBytes('true');
const FALSE = asciiBytes('false');
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const NEWLINE = 0x0a;

/** A time field: seconds after t0 to the microsecond (`formatSeconds`), null where not finite. */
function timeField(out: TextBytesWriter, key: Uint8Array, value: number, t0: number): void {
  out.bytes(key);
  if (!writeSeconds(out, value - t0)) out.bytes(NULL);
}

/** Any other field: numbers as `String` writes them (null where not finite), the rest as JSON.stringify does. */
function scalarField(out: TextBytesWriter, key: Uint8Array, value: string | number | boolean): void {
  out.bytes(key);
  if (typeof value === 'number') {
    if (Number.isFinite(value)) out.number(value);
    else out.bytes(NULL);
  } else if (typeof value === 'boolean') {
    out.bytes(value ? TRUE : FALSE);
  } else {
    out.text(JSON.stringify(value));
  }
}

/** A per-token gap: seconds rounded to the nanosecond (`formatNanoseconds`). */
function nanosecondsField(out: TextBytesWriter, seconds: number): void {
  const nanos = Math.round(seconds * 1e9);
  if (Number.isFinite(nanos)) out.fixedPoint(nanos, 9);
  else out.bytes(NULL);
}

function* requestsJsonLines(records: readonly RequestRecord[], t0: number): Generator<Uint8Array> {
  const out = new TextBytesWriter(1 << 20);
  for (let from = 0; from < records.length; from += CHUNK_RECORDS) {
    const to = Math.min(records.length, from + CHUNK_RECORDS);
    for (let index = from; index < to; index++) {
      const record = records[index] as RequestRecord;
      if (!record.warmup) writeRecordJsonLine(out, record, t0);
    }
    yield out.take();
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
