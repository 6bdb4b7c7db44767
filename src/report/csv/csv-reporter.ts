import { join } from 'node:path';
import { DERIVED_COLUMNS, deriveColumnArrays } from '../../analysis/derive.js';
import type { DerivedColumnName } from '../../types/summary.js';
import type { RequestRecord } from '../../types/record.js';
import type { ReportContext, Reporter } from '../../types/reporter.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import {
  actualTotalTokens,
  EXTRA_COLUMNS,
  FIRST_USERS_COMPUTED_COLUMNS,
  FIRST_USERS_STORED_COLUMNS,
  hasGeneratedText,
  HOST_COLUMN,
  STATUS_COLUMNS,
  TIMESTAMP_COLUMNS,
  TOKEN_COLUMNS,
  WORKLOAD_COLUMNS,
} from '../record-columns.js';
import { asciiBytes, TextBytesWriter } from '../../utils/text-bytes-writer.js';
import { csvField, csvLine, writeSeconds } from './csv-format.js';
import { measuredRecords } from '../../analysis/measured-records.js';

export const REQUESTS_CSV = 'requests.csv';

/**
 * The header of requests.csv: request_id, then the SPEC §2 groups in order, then servelab's extra fields, then the
 * first users' own columns (req_id, has_generated_text, actual_total_tokens, output_tokens_from_trace).
 */
export const REQUESTS_CSV_COLUMNS: readonly string[] = [
  'request_id',
  ...TIMESTAMP_COLUMNS.map((column) => column.column),
  HOST_COLUMN.column,
  ...DERIVED_COLUMNS.map((column) => column.name),
  ...TOKEN_COLUMNS.map((column) => column.column),
  'decode_length',
  ...WORKLOAD_COLUMNS.map((column) => column.column),
  ...STATUS_COLUMNS.map((column) => column.column),
  ...EXTRA_COLUMNS.map((column) => column.column),
  ...FIRST_USERS_COMPUTED_COLUMNS.map((column) => column.column),
  ...FIRST_USERS_STORED_COLUMNS.map((column) => column.column),
];

const CHUNK_RECORDS = 4096;

/**
 * One row given the record and its derived values (read at `index` of the column arrays), written as bytes; every
 * cell but the first writes its own leading comma. Fields are read by name, in the order of REQUESTS_CSV_COLUMNS (a
 * test checks the header and the cells agree), because a generic loop over column descriptors costs a megamorphic
 * lookup per cell and this runs for every request of a million-request run.
 */
function writeCsvRow(out: TextBytesWriter, record: RequestRecord, t0: number, derived: Record<DerivedColumnName, Float64Array>, index: number): void {
  if (record.requestId !== undefined && record.requestId !== '') out.text(csvField(record.requestId));
  timeCell(out, record.scheduledTime, t0);
  timeCell(out, record.arrivalTime, t0);
  timeCell(out, record.routerSendTime, t0);
  timeCell(out, record.serverCreatedTime, t0);
  timeCell(out, record.queueTimeStart, t0);
  timeCell(out, record.queueTimeEnd, t0);
  timeCell(out, record.serverFirstTokenTime, t0);
  timeCell(out, record.firstTokenTime, t0);
  timeCell(out, record.finishTime, t0);
  textCell(out, record.host);
  secondsCell(out, derived.total_latency[index]);
  secondsCell(out, derived.server_latency[index]);
  secondsCell(out, derived.ttft[index]);
  secondsCell(out, derived.server_ttft[index]);
  secondsCell(out, derived.queue_time_in_router[index]);
  secondsCell(out, derived.network_time[index]);
  secondsCell(out, derived.tokenize_time[index]);
  secondsCell(out, derived.pure_queue_time[index]);
  secondsCell(out, derived.queue_time_in_server[index]);
  secondsCell(out, derived.prefill_time[index]);
  secondsCell(out, derived.decode_time[index]);
  secondsCell(out, derived.tpot[index]);
  secondsCell(out, derived.send_lag[index]);
  secondsCell(out, derived.intended_latency[index]);
  countCell(out, record.inputLength);
  countCell(out, record.expectedOutputLength);
  countCell(out, record.actualPromptTokens);
  countCell(out, record.actualOutputTokens);
  countCell(out, record.cachedTokens);
  countCell(out, record.actualOutputTokens);
  countCell(out, record.prefixGroup);
  textCell(out, record.sessionId);
  countCell(out, record.datasetIndex);
  flagCell(out, record.success);
  textCell(out, record.error);
  countCell(out, record.httpStatus);
  countCell(out, record.numRetractions);
  countCell(out, record.retries);
  textCell(out, record.finishReason);
  textCell(out, record.errorMessage);
  timeCell(out, record.dispatchTime, t0);
  flagCell(out, record.heldForConcurrency);
  timeCell(out, record.serverDispatchTime, t0);
  timeCell(out, record.serverResponseSentTime, t0);
  timeCell(out, record.serverFinishTime, t0);
  countCell(out, record.prefillWaitingLatency);
  countCell(out, record.prefillLaunchLatency);
  countCell(out, record.decodeThroughputTokensPerSecond);
  countCell(out, record.serverStatusCode);
  textCell(out, record.dataQuality);
  textCell(out, record.requestId);
  flagCell(out, hasGeneratedText(record));
  countCell(out, actualTotalTokens(record));
  countCell(out, record.outputTokensFromTrace);
  out.byte(NEWLINE);
}

const COMMA = 0x2c;
const NEWLINE = 0x0a;
const TRUE = asciiBytes('true');
const FALSE = asciiBytes('false');

/** Seconds as `formatSeconds` writes them (empty when absent or not finite). Each cell writes its comma first. */
function secondsCell(out: TextBytesWriter, seconds: number | undefined): void {
  out.byte(COMMA);
  writeSeconds(out, seconds);
}

function timeCell(out: TextBytesWriter, time: number | undefined, t0: number): void {
  secondsCell(out, time === undefined ? undefined : time - t0);
}

/**
 * A count as `csvField` writes it: empty when absent or not finite. The cells below take `csvField`'s own way for a
 * value of another type than the field's (a record read back from a hand-edited requests.jsonl, say).
 */
function countCell(out: TextBytesWriter, value: number | undefined): void {
  out.byte(COMMA);
  if (typeof value === 'number') {
    if (Number.isFinite(value)) out.number(value);
  } else if (value !== undefined) out.text(csvField(value));
}

function flagCell(out: TextBytesWriter, value: boolean | undefined): void {
  out.byte(COMMA);
  if (typeof value === 'boolean') out.bytes(value ? TRUE : FALSE);
  else if (value !== undefined) out.text(csvField(value));
}

/** Text as `csvField` writes it: quoted where needed, a would-be formula neutralised. */
function textCell(out: TextBytesWriter, value: string | undefined): void {
  out.byte(COMMA);
  if (value !== undefined && value !== '') out.text(csvField(value));
}

/** One row of requests.csv for a record; times relative to t0 and every duration in seconds, to the microsecond. */
export function requestsCsvRow(record: RequestRecord, t0: number): string {
  writeCsvRow(rowWriter, record, t0, deriveColumnArrays([record]), 0);
  return rowWriter.takeText();
}

/** `requestsCsvRow`'s scratch. */
const rowWriter = new TextBytesWriter(4096);

function* requestsCsvLines(records: readonly RequestRecord[], t0: number): Generator<string | Uint8Array> {
  yield csvLine(REQUESTS_CSV_COLUMNS.map((name) => csvField(name)));
  const out = new TextBytesWriter(1 << 20);
  const kept = measuredRecords(records);
  // Derived columns a chunk at a time: the fast columnar path, without holding a million-row copy of them.
  for (let from = 0; from < kept.length; from += CHUNK_RECORDS) {
    const chunk = kept.slice(from, from + CHUNK_RECORDS);
    const derived = deriveColumnArrays(chunk);
    for (let index = 0; index < chunk.length; index++) writeCsvRow(out, chunk[index] as RequestRecord, t0, derived, index);
    yield out.take();
  }
}

/** `requests.csv`: one row per request with the SPEC §2 column names, readable by pandas.read_csv and spreadsheets. */
export const csvReporter: Reporter = {
  name: 'csv',
  async write(context: ReportContext): Promise<string[]> {
    const path = join(context.outputDirectory, REQUESTS_CSV);
    await writeFileAtomic(path, requestsCsvLines(context.run.records, context.run.info.startTime));
    return [path];
  },
};
