import { join } from 'node:path';
import type { RequestRecord } from '../../types/record.js';
import type { ReportContext, Reporter } from '../../types/reporter.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import { INTER_TOKEN_LATENCIES_KEY, RECORD_COLUMNS } from '../record-columns.js';
import { formatSeconds } from '../csv/csv-format.js';
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
  if (!Number.isFinite(seconds)) return 'null';
  const nanos = Math.round(seconds * 1e9);
  if (nanos === 0) return '0';
  const negative = nanos < 0;
  const absolute = negative ? -nanos : nanos;
  const whole = Math.floor(absolute / 1e9);
  let fraction = absolute - whole * 1e9;
  let text = String(whole);
  if (fraction !== 0) {
    let digits = 9;
    while (fraction % 10 === 0) {
      fraction /= 10;
      digits--;
    }
    text += `.${String(fraction).padStart(digits, '0')}`;
  }
  return negative ? `-${text}` : text;
}

/**
 * The same object as `JSON.stringify(recordToJsonObject(record, t0))`, built as text directly (a test checks they
 * agree), with times and gaps formatted from integers.
 */
export function recordToJsonLine(record: RequestRecord, t0: number): string {
  const parts: string[] = [];
  for (const column of RECORD_COLUMNS) {
    const value = record[column.field];
    if (value === undefined) continue;
    const text =
      column.kind === 'time'
        ? formatSeconds((value as number) - t0)
        : typeof value === 'number'
          ? jsonNumber(value)
          : JSON.stringify(value);
    parts.push(`"${column.column}":${text === '' ? 'null' : text}`);
  }
  const gaps = record.interTokenLatencies;
  if (gaps) {
    const list: string[] = new Array(gaps.length);
    for (let index = 0; index < gaps.length; index++) list[index] = formatNanoseconds(gaps[index] as number);
    parts.push(`"${INTER_TOKEN_LATENCIES_KEY}":[${list.join(',')}]`);
  }
  return `{${parts.join(',')}}\n`;
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
