/** Parquet type of each kind of record column: times and durations are seconds after t0 as float64. */
export type ParquetColumnType = 'DOUBLE' | 'INT32' | 'BOOLEAN' | 'STRING';

/** A boolean cell in a packed column: 0 false, 1 true, this for absent. */
export const ABSENT_BOOLEAN = 2;

/**
 * One column of one row group, packed so that it crosses to a worker thread without copying: numbers as float64 with
 * NaN for an absent value (a time or count is never NaN: non-finite values are written as absent), booleans as bytes
 * (ABSENT_BOOLEAN for absent), strings as an array with null for absent.
 */
export type PackedColumn = Float64Array | Uint8Array | (string | null)[];

/** What requests.parquet's encoder needs before its rows: the schema, t0 and the row group size. */
export interface ParquetHeader {
  t0: number;
  /** `mostlyDistinct`: values seldom repeat (instants), so the encoder writes them plain without trying a dictionary. */
  columns: { name: string; type: ParquetColumnType; mostlyDistinct?: boolean }[];
  /** Rows per row group (the last may hold fewer). */
  rowGroupRows: number;
}

/** requests.parquet's content before encoding: its header and its row groups' packed columns. */
export interface PackedParquet extends ParquetHeader {
  /** One entry per row group, each with one packed column per entry of `columns`; packed as it is read. */
  rowGroups: Iterable<PackedColumn[]>;
}
