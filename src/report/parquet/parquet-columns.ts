import { deriveColumnArrays } from '../../analysis/derive.js';
import type { RequestRecord } from '../../types/record.js';
import type { DerivedColumnName } from '../../types/summary.js';
import { REQUEST_COLUMNS, type AliasColumn, type ComputedColumn, type RecordColumnKind, type StoredColumn } from '../../analysis/record-columns.js';
import { ABSENT_BOOLEAN, type PackedColumn, type PackedParquet, type ParquetColumnType } from './packed-columns.js';
import { ParquetEncoder } from './parquet-encoder.js';
import { measuredRecords } from '../../analysis/measured-records.js';

/** Rows per row group: also how many records are turned into column arrays at a time. */
export const PARQUET_ROW_GROUP_ROWS = 100_000;

/** Seconds rounded to the microsecond, as requests.csv writes them, so that both files hold the very same numbers. */
function microseconds(value: number): number {
  return Number.isFinite(value) ? Math.round(value * 1e6) / 1e6 : Number.NaN;
}

/** An integer column holds int32 values only when every present value is one; otherwise it is kept as float64. */
function isInt32(value: number): boolean {
  return Number.isInteger(value) && value >= -2147483648 && value <= 2147483647;
}

/** One requests.csv column: its record field (or derived column) and its parquet type. */
interface ParquetColumnPlan {
  name: string;
  type: ParquetColumnType;
  /** A field of the record (stored, or another name for one), or undefined for a derived duration or a computed column. */
  spec?: StoredColumn | AliasColumn;
  /** A column computed from the record (the first users' own). */
  computed?: ComputedColumn;
}

/** How the column table's kinds are typed in requests.parquet. */
const FIELD_TYPES: Record<RecordColumnKind, ParquetColumnType> = { time: 'DOUBLE', count: 'INT32', float: 'DOUBLE', boolean: 'BOOLEAN', string: 'STRING' };

/**
 * The columns in the order and under the names of requests.csv (the column table). An integer column falls back to
 * float64 when some value in the whole run is not a 32-bit integer, so that no value is truncated and every row group
 * has one schema.
 */
function columnPlan(records: readonly RequestRecord[]): ParquetColumnPlan[] {
  return REQUEST_COLUMNS.map((column): ParquetColumnPlan => {
    const name = column.column;
    if (column.source === 'derived') return { name, type: 'DOUBLE' };
    if (column.source === 'computed') {
      const computed = column;
      let type = FIELD_TYPES[computed.kind];
      if (type === 'INT32' && records.some((record) => { const value = computed.compute(record); return typeof value === 'number' && !isInt32(value); })) type = 'DOUBLE';
      return { name, type, computed };
    }
    const spec = column;
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

/** A computed column's values: absent (or empty-string) values as absent. */
function computedValues(computed: ComputedColumn, records: readonly RequestRecord[]): PackedColumn {
  const count = records.length;
  if (computed.kind === 'string') {
    const data = new Array<string | null>(count);
    for (let index = 0; index < count; index++) {
      const value = computed.compute(records[index] as RequestRecord);
      data[index] = value === undefined || value === '' ? null : String(value);
    }
    return data;
  }
  if (computed.kind === 'boolean') {
    const data = new Uint8Array(count);
    for (let index = 0; index < count; index++) {
      const value = computed.compute(records[index] as RequestRecord);
      data[index] = typeof value === 'boolean' ? Number(value) : ABSENT_BOOLEAN;
    }
    return data;
  }
  const data = new Float64Array(count);
  for (let index = 0; index < count; index++) {
    const value = computed.compute(records[index] as RequestRecord);
    data[index] = typeof value === 'number' ? value : Number.NaN;
  }
  return data;
}

/** One stored field's values for a slice of records: times relative to t0, absent (or empty-string) values as absent. */
function fieldValues(spec: StoredColumn | AliasColumn, records: readonly RequestRecord[], t0: number): PackedColumn {
  const count = records.length;
  const field = spec.field;
  if (spec.kind === 'time') {
    const data = new Float64Array(count);
    for (let index = 0; index < count; index++) {
      const value = (records[index] as RequestRecord)[field] as number | undefined;
      data[index] = value === undefined ? Number.NaN : microseconds(value - t0);
    }
    return data;
  }
  if (spec.kind === 'count' || spec.kind === 'float') {
    const data = new Float64Array(count);
    for (let index = 0; index < count; index++) {
      const value = (records[index] as RequestRecord)[field] as number | undefined;
      data[index] = typeof value === 'number' && Number.isFinite(value) ? value : Number.NaN;
    }
    return data;
  }
  if (spec.kind === 'boolean') {
    const data = new Uint8Array(count);
    for (let index = 0; index < count; index++) {
      const value = (records[index] as RequestRecord)[field] as boolean | undefined;
      data[index] = typeof value === 'boolean' ? Number(value) : ABSENT_BOOLEAN;
    }
    return data;
  }
  const data = new Array<string | null>(count);
  for (let index = 0; index < count; index++) {
    const value = (records[index] as RequestRecord)[field] as string | undefined;
    // requests.csv writes an empty string as an empty cell, which reads back as absent: the same here.
    data[index] = value === undefined || value === null || value === '' ? null : String(value);
  }
  return data;
}

function packRowGroup(plan: readonly ParquetColumnPlan[], records: readonly RequestRecord[], t0: number): PackedColumn[] {
  const derived = deriveColumnArrays(records);
  return plan.map((column): PackedColumn => {
    if (column.computed) return computedValues(column.computed, records);
    if (!column.spec) {
      const values = derived[column.name as DerivedColumnName];
      const data = new Float64Array(records.length);
      for (let index = 0; index < records.length; index++) data[index] = microseconds(values[index] as number);
      return data;
    }
    return fieldValues(column.spec, records, t0);
  });
}

/**
 * The requests.csv rows (warmups left out) as packed columns, in row groups of `rowGroupRows`: each row group is packed
 * when it is read from `rowGroups`, so that its encoding can start before the next one is packed.
 */
export function packRequestColumns(records: readonly RequestRecord[], t0: number, rowGroupRows = PARQUET_ROW_GROUP_ROWS): PackedParquet {
  const kept = measuredRecords(records);
  const plan = columnPlan(kept);
  function* rowGroups(): Generator<PackedColumn[]> {
    for (let from = 0; from < kept.length; from += rowGroupRows) yield packRowGroup(plan, kept.slice(from, from + rowGroupRows), t0);
  }
  return { t0, columns: plan.map(({ name, type, spec }) => ({ name, type, ...(spec?.kind === 'time' ? { mostlyDistinct: true } : {}) })), rowGroupRows, rowGroups: rowGroups() };
}

/** The buffers of a packed row group's numeric and boolean columns: moved, not copied, when it is posted to a worker. */
export function rowGroupTransferList(rowGroup: readonly PackedColumn[]): ArrayBuffer[] {
  const buffers: ArrayBuffer[] = [];
  for (const column of rowGroup) if (!Array.isArray(column)) buffers.push(column.buffer as ArrayBuffer);
  return buffers;
}

/** The bytes of requests.parquet from its packed columns, encoded on this thread. */
export function encodePackedParquet(packed: PackedParquet): Uint8Array {
  const encoder = new ParquetEncoder(packed);
  for (const rowGroup of packed.rowGroups) encoder.add(rowGroup);
  return encoder.finish();
}
