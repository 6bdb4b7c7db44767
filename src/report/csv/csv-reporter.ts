import { join } from 'node:path';
import { DERIVED_COLUMNS } from '../../analysis/derive.js';
import type { RequestRecord } from '../../types/record.js';
import type { ReportContext, Reporter } from '../../types/reporter.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import {
  EXTRA_COLUMNS,
  HOST_COLUMN,
  STATUS_COLUMNS,
  TIMESTAMP_COLUMNS,
  TOKEN_COLUMNS,
  WORKLOAD_COLUMNS,
  type RecordColumn,
} from '../record-columns.js';
import { csvField, csvLine, formatSeconds } from './csv-format.js';

export const REQUESTS_CSV = 'requests.csv';

/** The header of requests.csv: request_id, then the SPEC §2 groups in order, then servelab's extra fields. */
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
];

function plainField(record: RequestRecord, column: RecordColumn): string {
  return csvField(record[column.field] as string | number | boolean | undefined);
}

/** One row of requests.csv for a record; times relative to t0 and every duration in seconds, to the microsecond. */
export function requestsCsvRow(record: RequestRecord, t0: number): string {
  const fields: string[] = [csvField(record.requestId)];
  for (const column of TIMESTAMP_COLUMNS) {
    const time = record[column.field] as number | undefined;
    fields.push(time === undefined ? '' : formatSeconds(time - t0));
  }
  fields.push(plainField(record, HOST_COLUMN));
  for (const column of DERIVED_COLUMNS) fields.push(formatSeconds(column.compute(record)));
  for (const column of TOKEN_COLUMNS) fields.push(plainField(record, column));
  fields.push(csvField(record.actualOutputTokens));
  for (const column of WORKLOAD_COLUMNS) fields.push(plainField(record, column));
  for (const column of STATUS_COLUMNS) fields.push(plainField(record, column));
  for (const column of EXTRA_COLUMNS) fields.push(plainField(record, column));
  return csvLine(fields);
}

function* requestsCsvLines(records: readonly RequestRecord[], t0: number): Generator<string> {
  yield csvLine(REQUESTS_CSV_COLUMNS.map((name) => csvField(name)));
  for (const record of records) if (!record.warmup) yield requestsCsvRow(record, t0);
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
