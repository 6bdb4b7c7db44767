import { join } from 'node:path';
import { deriveColumnArrays } from '../../analysis/derive.js';
import type { DerivedColumnName } from '../../types/summary.js';
import type { RequestRecord } from '../../types/record.js';
import type { ReportContext, Reporter } from '../../types/reporter.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import { REQUEST_COLUMNS, REQUESTS_CSV_COLUMNS, type RequestColumn } from '../../analysis/record-columns.js';
import { asciiBytes, TextBytesWriter } from '../../utils/text-bytes-writer.js';
import { csvField, csvLine, writeSeconds } from './csv-format.js';
import { measuredRecords } from '../../analysis/measured-records.js';
import { compileRowWriter, fieldAccess } from '../compile-row-writer.js';

export const REQUESTS_CSV = 'requests.csv';

/** The header of requests.csv: the column table's names, in its order (src/analysis/record-columns.ts). */
export { REQUESTS_CSV_COLUMNS };

const CHUNK_RECORDS = 4096;

type CsvRowWriter = (out: TextBytesWriter, record: RequestRecord, t0: number, derived: Record<DerivedColumnName, Float64Array>, index: number) => void;

const COMMA = 0x2c;
const NEWLINE = 0x0a;
const TRUE = asciiBytes('true');
const FALSE = asciiBytes('false');

/** An instant as seconds after t0, as `formatSeconds` writes them (empty when absent or not finite). */
function timeValue(out: TextBytesWriter, time: number | undefined, t0: number): void {
  writeSeconds(out, time === undefined ? undefined : time - t0);
}

/**
 * A count or a measured quantity as `csvField` writes it: empty when absent or not finite. These writers take
 * `csvField`'s own way for a value of another type than the field's (a record read back from a hand-edited
 * requests.jsonl, say).
 */
function numberValue(out: TextBytesWriter, value: number | undefined): void {
  if (typeof value === 'number') {
    if (Number.isFinite(value)) out.number(value);
  } else if (value !== undefined) out.text(csvField(value));
}

function flagValue(out: TextBytesWriter, value: boolean | undefined): void {
  if (typeof value === 'boolean') out.bytes(value ? TRUE : FALSE);
  else if (value !== undefined) out.text(csvField(value));
}

/** Text as `csvField` writes it: quoted where needed, a would-be formula neutralised. */
function textValue(out: TextBytesWriter, value: string | undefined): void {
  if (value !== undefined && value !== '') out.text(csvField(value));
}

const VALUE_WRITERS = { float: 'numberValue', count: 'numberValue', boolean: 'flagValue', string: 'textValue' } as const;

/** One cell's statement: how the column table says this column is rendered in CSV. */
function cellStatement(column: RequestColumn, position: number): string {
  switch (column.source) {
    case 'derived':
      return `writeSeconds(out, ${fieldAccess('derived', column.column)}[index]);`;
    case 'computed':
      return `${VALUE_WRITERS[column.kind]}(out, compute${position}(record));`;
    default: {
      const value = fieldAccess('record', column.field);
      return column.kind === 'time' ? `timeValue(out, ${value}, t0);` : `${VALUE_WRITERS[column.kind]}(out, ${value});`;
    }
  }
}

/**
 * One row given the record and its derived values (read at `index` of the column arrays), written as bytes, generated
 * from the column table: each field read by name at its own site (compile-row-writer.ts says why), in the order of
 * REQUESTS_CSV_COLUMNS; every cell but the first is preceded by its comma.
 */
const writeCsvRow: CsvRowWriter = (() => {
  const statements: string[] = [];
  const bindings: Record<string, unknown> = { timeValue, numberValue, flagValue, textValue, writeSeconds };
  REQUEST_COLUMNS.forEach((column, position) => {
    if (position > 0) statements.push(`out.byte(${COMMA});`);
    statements.push(cellStatement(column, position));
    if (column.source === 'computed') bindings[`compute${position}`] = column.compute;
  });
  statements.push(`out.byte(${NEWLINE});`);
  return compileRowWriter<CsvRowWriter>('writeCsvRow', ['out', 'record', 't0', 'derived', 'index'], statements, bindings);
})();

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

/** `requests.csv`: one row per request with the column names of docs/metrics.md, readable by pandas.read_csv and spreadsheets. */
export const csvReporter: Reporter = {
  name: 'csv',
  async write(context: ReportContext): Promise<string[]> {
    const path = join(context.outputDirectory, REQUESTS_CSV);
    await writeFileAtomic(path, requestsCsvLines(context.run.records, context.run.info.startTime));
    return [path];
  },
};
