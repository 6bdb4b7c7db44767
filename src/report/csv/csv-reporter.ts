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
import { csvField, csvLine, formatSeconds } from './csv-format.js';

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

function relative(time: number | undefined, t0: number): string {
  return time === undefined ? '' : formatSeconds(time - t0);
}

/**
 * One row given the record and its derived values (read at `index` of the column arrays). Fields are read by name, in
 * the order of REQUESTS_CSV_COLUMNS (a test checks the header and the cells agree), because a generic loop over column
 * descriptors costs a megamorphic lookup per cell and this runs for every request of a million-request run.
 */
function csvRow(record: RequestRecord, t0: number, derived: Record<DerivedColumnName, Float64Array>, index: number): string {
  const d = (name: DerivedColumnName): string => formatSeconds(derived[name][index]);
  return csvLine([
    csvField(record.requestId),
    relative(record.scheduledTime, t0),
    relative(record.arrivalTime, t0),
    relative(record.routerSendTime, t0),
    relative(record.serverCreatedTime, t0),
    relative(record.queueTimeStart, t0),
    relative(record.queueTimeEnd, t0),
    relative(record.serverFirstTokenTime, t0),
    relative(record.firstTokenTime, t0),
    relative(record.finishTime, t0),
    csvField(record.host),
    d('total_latency'),
    d('server_latency'),
    d('ttft'),
    d('server_ttft'),
    d('queue_time_in_router'),
    d('network_time'),
    d('tokenize_time'),
    d('pure_queue_time'),
    d('queue_time_in_server'),
    d('prefill_time'),
    d('decode_time'),
    d('tpot'),
    d('send_lag'),
    d('intended_latency'),
    csvField(record.inputLength),
    csvField(record.expectedOutputLength),
    csvField(record.actualPromptTokens),
    csvField(record.actualOutputTokens),
    csvField(record.cachedTokens),
    csvField(record.actualOutputTokens),
    csvField(record.prefixGroup),
    csvField(record.sessionId),
    csvField(record.datasetIndex),
    csvField(record.success),
    csvField(record.error),
    csvField(record.httpStatus),
    csvField(record.numRetractions),
    csvField(record.retries),
    csvField(record.finishReason),
    csvField(record.errorMessage),
    relative(record.dispatchTime, t0),
    csvField(record.heldForConcurrency),
    relative(record.serverDispatchTime, t0),
    relative(record.serverResponseSentTime, t0),
    relative(record.serverFinishTime, t0),
    csvField(record.prefillWaitingLatency),
    csvField(record.prefillLaunchLatency),
    csvField(record.decodeThroughputTokensPerSecond),
    csvField(record.serverStatusCode),
    csvField(record.dataQuality),
    csvField(record.requestId),
    csvField(hasGeneratedText(record)),
    csvField(actualTotalTokens(record)),
    csvField(record.outputTokensFromTrace),
  ]);
}

/** One row of requests.csv for a record; times relative to t0 and every duration in seconds, to the microsecond. */
export function requestsCsvRow(record: RequestRecord, t0: number): string {
  return csvRow(record, t0, deriveColumnArrays([record]), 0);
}

function* requestsCsvLines(records: readonly RequestRecord[], t0: number): Generator<string> {
  yield csvLine(REQUESTS_CSV_COLUMNS.map((name) => csvField(name)));
  const kept = records.some((record) => record.warmup) ? records.filter((record) => !record.warmup) : records;
  // Derived columns a chunk at a time: the fast columnar path, without holding a million-row copy of them.
  for (let from = 0; from < kept.length; from += CHUNK_RECORDS) {
    const chunk = kept.slice(from, from + CHUNK_RECORDS);
    const derived = deriveColumnArrays(chunk);
    const lines: string[] = new Array(chunk.length);
    for (let index = 0; index < chunk.length; index++) lines[index] = csvRow(chunk[index] as RequestRecord, t0, derived, index);
    yield lines.join('');
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
