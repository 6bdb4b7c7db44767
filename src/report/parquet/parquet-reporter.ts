import { join } from 'node:path';
import { ByteWriter, ParquetWriter, schemaFromColumnData } from 'hyparquet-writer';
import type { ColumnSource } from 'hyparquet-writer';
import { DERIVED_COLUMNS, deriveColumnArrays } from '../../analysis/derive.js';
import type { RequestRecord } from '../../types/record.js';
import type { DerivedColumnName } from '../../types/summary.js';
import type { ReportContext, Reporter } from '../../types/reporter.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import { REQUESTS_CSV_COLUMNS } from '../csv/csv-reporter.js';
import { FIRST_USERS_COMPUTED_COLUMNS, RECORD_COLUMNS, type ComputedColumn, type RecordColumn } from '../record-columns.js';

export const REQUESTS_PARQUET = 'requests.parquet';

/** Parquet type of each kind of record column: times and durations are seconds after t0 as float64. */
export type ParquetColumnType = 'DOUBLE' | 'INT32' | 'BOOLEAN' | 'STRING';

const RECORD_COLUMN_BY_NAME = new Map<string, RecordColumn>(RECORD_COLUMNS.map((column) => [column.column, column]));
const DERIVED_NAMES = new Set<string>(DERIVED_COLUMNS.map((column) => column.name));
const COMPUTED_BY_NAME = new Map<string, ComputedColumn>(FIRST_USERS_COMPUTED_COLUMNS.map((column) => [column.column, column]));

/** Seconds rounded to the microsecond, as requests.csv writes them, so that both files hold the very same numbers. */
function microseconds(value: number): number | null {
  return Number.isFinite(value) ? Math.round(value * 1e6) / 1e6 : null;
}

/** An integer column holds int32 values only when every present value is one; otherwise it is kept as float64. */
function isInt32(value: number): boolean {
  return Number.isInteger(value) && value >= -2147483648 && value <= 2147483647;
}

type Cell = number | string | boolean | null;

/** Rows per row group: also how many records are turned into column arrays at a time. */
export const PARQUET_ROW_GROUP_ROWS = 100_000;

/** One requests.csv column: its record field (or derived column) and its parquet type. */
interface ParquetColumnPlan {
  name: string;
  type: ParquetColumnType;
  /** A stored field of the record, or undefined for a derived duration or a computed column. */
  spec?: RecordColumn;
  /** A column computed from the record (the first users' own). */
  computed?: ComputedColumn;
}

const FIELD_TYPES: Record<RecordColumn['kind'], ParquetColumnType> = { time: 'DOUBLE', number: 'INT32', float: 'DOUBLE', boolean: 'BOOLEAN', string: 'STRING' };

/**
 * The columns in the order and under the names of requests.csv. An integer column falls back to float64 when some
 * value in the whole run is not a 32-bit integer, so that no value is truncated and every row group has one schema.
 */
function columnPlan(records: readonly RequestRecord[]): ParquetColumnPlan[] {
  const decodeLength = RECORD_COLUMN_BY_NAME.get('actual_output_tokens') as RecordColumn;
  return REQUESTS_CSV_COLUMNS.map((name): ParquetColumnPlan => {
    if (DERIVED_NAMES.has(name)) return { name, type: 'DOUBLE' };
    const computed = COMPUTED_BY_NAME.get(name);
    if (computed) {
      let type = FIELD_TYPES[computed.kind];
      if (type === 'INT32' && records.some((record) => { const value = computed.compute(record); return typeof value === 'number' && !isInt32(value); })) type = 'DOUBLE';
      return { name, type, computed };
    }
    const spec = name === 'decode_length' ? decodeLength : RECORD_COLUMN_BY_NAME.get(name);
    if (!spec) throw new Error(`requests.csv column "${name}" has no record field or derivation`);
    let type = FIELD_TYPES[spec.kind];
    if (type === 'INT32') {
      for (const record of records) {
        const value = record[spec.field] as number | undefined;
        if (typeof value === 'number' && Number.isFinite(value) && !isInt32(value)) {
          type = 'DOUBLE';
          break;
        }
      }
    }
    return { name, type, spec };
  });
}

/** One column's values for a slice of records: times relative to t0, absent (or empty-string) values as null. */
function fieldValues(spec: RecordColumn, records: readonly RequestRecord[], t0: number): Cell[] {
  const count = records.length;
  const data: Cell[] = new Array<Cell>(count);
  const field = spec.field;
  if (spec.kind === 'time') {
    for (let index = 0; index < count; index++) {
      const value = (records[index] as RequestRecord)[field] as number | undefined;
      data[index] = value === undefined ? null : microseconds(value - t0);
    }
  } else if (spec.kind === 'number' || spec.kind === 'float') {
    for (let index = 0; index < count; index++) {
      const value = (records[index] as RequestRecord)[field] as number | undefined;
      data[index] = typeof value === 'number' && Number.isFinite(value) ? value : null;
    }
  } else if (spec.kind === 'boolean') {
    for (let index = 0; index < count; index++) {
      const value = (records[index] as RequestRecord)[field] as boolean | undefined;
      data[index] = typeof value === 'boolean' ? value : null;
    }
  } else {
    for (let index = 0; index < count; index++) {
      const value = (records[index] as RequestRecord)[field] as string | undefined;
      // requests.csv writes an empty string as an empty cell, which reads back as absent: the same here.
      data[index] = value === undefined || value === null || value === '' ? null : String(value);
    }
  }
  return data;
}

function sliceColumns(plan: readonly ParquetColumnPlan[], records: readonly RequestRecord[], t0: number): ColumnSource[] {
  const derived = deriveColumnArrays(records);
  return plan.map((column): ColumnSource => {
    const computed = column.computed;
    if (computed) {
      return { name: column.name, data: records.map((record): Cell => { const value = computed.compute(record); return value === undefined || value === '' ? null : value; }) };
    }
    if (!column.spec) {
      const values = derived[column.name as DerivedColumnName];
      const data: Cell[] = new Array<Cell>(records.length);
      for (let index = 0; index < records.length; index++) data[index] = microseconds(values[index] as number);
      return { name: column.name, data };
    }
    return { name: column.name, data: fieldValues(column.spec, records, t0) };
  });
}

/**
 * The bytes of requests.parquet: the requests.csv rows (warmups left out), Snappy-compressed, in row groups of
 * `rowGroupRows` (PARQUET_ROW_GROUP_ROWS by default). Column arrays are built one row group at a time, so a
 * million-record run never holds a million-element array of boxed values per column.
 */
export function requestsParquetBytes(records: readonly RequestRecord[], t0: number, rowGroupRows = PARQUET_ROW_GROUP_ROWS): Uint8Array {
  const kept = records.some((record) => record.warmup) ? records.filter((record) => !record.warmup) : records;
  const plan = columnPlan(kept);
  const schema = schemaFromColumnData({
    columnData: plan.map((column) => ({ name: column.name, type: column.type, nullable: true, data: [] })),
  });
  const writer = new ByteWriter();
  const parquet = new ParquetWriter({ writer, schema, createdBy: 'servelab', kvMetadata: [{ key: 'servelab.t0', value: String(t0) }] });
  for (let from = 0; from < kept.length; from += rowGroupRows) {
    const slice = kept.slice(from, from + rowGroupRows);
    void parquet.write({ columnData: sliceColumns(plan, slice, t0), rowGroupSize: rowGroupRows });
  }
  void parquet.finish();
  return writer.getBytes();
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
