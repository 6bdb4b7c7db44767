import { join } from 'node:path';
import type { RequestRecord } from '../../types/record.js';
import type { ReportContext, Reporter } from '../../types/reporter.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import { INTER_TOKEN_LATENCIES_KEY, STORED_COLUMNS } from '../../analysis/record-columns.js';
import { compileRowWriter, fieldAccess } from '../compile-row-writer.js';
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
  for (const column of STORED_COLUMNS) {
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
  for (const column of STORED_COLUMNS) {
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
  for (const column of STORED_COLUMNS) {
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

/** The stored fields of a record as JSONL key/value pairs, each key with its leading comma; generated from the table. */
type FieldsWriter = (out: TextBytesWriter, record: RequestRecord, t0: number) => void;

const writeStoredFields: FieldsWriter = (() => {
  const bindings: Record<string, unknown> = { timeField, scalarField };
  const statements = STORED_COLUMNS.map((column, position) => {
    bindings[`key${position}`] = asciiBytes(`,${JSON.stringify(column.column)}:`);
    const value = fieldAccess('record', column.field);
    const write = column.kind === 'time' ? `timeField(out, key${position}, ${value}, t0)` : `scalarField(out, key${position}, ${value})`;
    return `if (${value} !== undefined) ${write};`;
  });
  return compileRowWriter<FieldsWriter>('writeStoredFields', ['out', 'record', 't0'], statements, bindings);
})();

/**
 * The same object as `JSON.stringify(recordToJsonObject(record, t0))`, written as bytes (a test checks they agree, key
 * order included), with times and gaps formatted from integers. The fields are written by code generated from the
 * column table, each read by name at its own site (compile-row-writer.ts says why): a loop over the column descriptors
 * cost most of the 11 µs a record took, and this runs for every request as it finishes (the run journal) and again
 * for every request at the end.
 */
export function writeRecordJsonLine(out: TextBytesWriter, record: RequestRecord, t0: number): void {
  // Every key starts with a comma; the first field's is replaced by the opening brace.
  const first = out.length;
  writeStoredFields(out, record, t0);
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
