import { join } from 'node:path';
import { parquetWriteBuffer } from 'hyparquet-writer';
import type { ColumnSource } from 'hyparquet-writer';
import { DERIVED_COLUMNS, deriveColumnArrays } from '../../analysis/derive.js';
import type { RequestRecord } from '../../types/record.js';
import type { ReportContext, Reporter } from '../../types/reporter.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import { REQUESTS_CSV_COLUMNS } from '../csv/csv-reporter.js';
import { RECORD_COLUMNS, type RecordColumn } from '../record-columns.js';

export const REQUESTS_PARQUET = 'requests.parquet';

/** Parquet type of each kind of record column: times and durations are seconds after t0 as float64. */
export type ParquetColumnType = 'DOUBLE' | 'INT32' | 'BOOLEAN' | 'STRING';

const RECORD_COLUMN_BY_NAME = new Map<string, RecordColumn>(RECORD_COLUMNS.map((column) => [column.column, column]));
const DERIVED_NAMES = new Set<string>(DERIVED_COLUMNS.map((column) => column.name));

/** Seconds rounded to the microsecond, as requests.csv writes them, so that both files hold the very same numbers. */
function microseconds(value: number): number | null {
  return Number.isFinite(value) ? Math.round(value * 1e6) / 1e6 : null;
}

/** An integer column holds int32 values only when every present value is one; otherwise it is kept as float64. */
function isInt32(value: number): boolean {
  return Number.isInteger(value) && value >= -2147483648 && value <= 2147483647;
}

type Cell = number | string | boolean | null;

function column(name: string, type: ParquetColumnType, data: Cell[]): ColumnSource {
  return { name, type, data, nullable: true };
}

function fieldColumn(spec: RecordColumn, records: readonly RequestRecord[], t0: number, name = spec.column): ColumnSource {
  const count = records.length;
  const data: Cell[] = new Array<Cell>(count);
  const field = spec.field;
  switch (spec.kind) {
    case 'time': {
      for (let index = 0; index < count; index++) {
        const value = (records[index] as RequestRecord)[field] as number | undefined;
        data[index] = value === undefined ? null : microseconds(value - t0);
      }
      return column(name, 'DOUBLE', data);
    }
    case 'number': {
      let integers = true;
      for (let index = 0; index < count; index++) {
        const value = (records[index] as RequestRecord)[field] as number | undefined;
        if (value === undefined || value === null || !Number.isFinite(value)) {
          data[index] = null;
        } else {
          data[index] = value;
          if (integers && !isInt32(value)) integers = false;
        }
      }
      return column(name, integers ? 'INT32' : 'DOUBLE', data);
    }
    case 'boolean': {
      for (let index = 0; index < count; index++) {
        const value = (records[index] as RequestRecord)[field] as boolean | undefined;
        data[index] = typeof value === 'boolean' ? value : null;
      }
      return column(name, 'BOOLEAN', data);
    }
    case 'string': {
      for (let index = 0; index < count; index++) {
        const value = (records[index] as RequestRecord)[field] as string | undefined;
        // requests.csv writes an empty string as an empty cell, which reads back as absent: the same here.
        data[index] = value === undefined || value === null || value === '' ? null : String(value);
      }
      return column(name, 'STRING', data);
    }
  }
}

/**
 * The columns of requests.parquet, in the order and under the names of requests.csv, built once per column over all
 * kept records (warmups excluded, as in requests.csv).
 */
export function requestsParquetColumns(records: readonly RequestRecord[], t0: number): ColumnSource[] {
  const kept = records.some((record) => record.warmup) ? records.filter((record) => !record.warmup) : records;
  const derived = deriveColumnArrays(kept);
  const decodeLength = RECORD_COLUMN_BY_NAME.get('actual_output_tokens') as RecordColumn;
  return REQUESTS_CSV_COLUMNS.map((name) => {
    if (DERIVED_NAMES.has(name)) {
      const values = derived[name as keyof typeof derived];
      const data: Cell[] = new Array<Cell>(kept.length);
      for (let index = 0; index < kept.length; index++) data[index] = microseconds(values[index] as number);
      return column(name, 'DOUBLE', data);
    }
    if (name === 'decode_length') return fieldColumn(decodeLength, kept, t0, name);
    const spec = RECORD_COLUMN_BY_NAME.get(name);
    if (!spec) throw new Error(`requests.csv column "${name}" has no record field or derivation`);
    return fieldColumn(spec, kept, t0);
  });
}

/** The bytes of requests.parquet (Snappy-compressed, row groups of 100,000 rows after a first one of 1,000). */
export function requestsParquetBytes(records: readonly RequestRecord[], t0: number): Uint8Array {
  const buffer = parquetWriteBuffer({
    columnData: requestsParquetColumns(records, t0),
    createdBy: 'servelab',
    kvMetadata: [{ key: 'servelab.t0', value: String(t0) }],
  });
  return new Uint8Array(buffer);
}

/**
 * `requests.parquet`: the columns of requests.csv with types (float64 seconds after t0, int32 counts, booleans, UTF-8
 * strings, nulls where a value is absent), for `pandas.read_parquet` on runs too large to parse as text.
 */
export const parquetReporter: Reporter = {
  name: 'parquet',
  async write(context: ReportContext): Promise<string[]> {
    const path = join(context.outputDirectory, REQUESTS_PARQUET);
    await writeFileAtomic(path, requestsParquetBytes(context.run.records, context.run.info.startTime));
    return [path];
  },
};
