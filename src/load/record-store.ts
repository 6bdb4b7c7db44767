import { NON_COLUMN_FIELDS, STORED_COLUMNS, type StoredColumn } from '../analysis/record-columns.js';
import type { RequestRecord } from '../types/record.js';

/**
 * Finished requests in column form: one typed array per field, in chunks of CHUNK_ROWS rows, so a million records take
 * about 150 MB less than a million objects, and a finished request costs at most ~210 bytes (its per-token gaps
 * aside): 4-8 bytes for each field that some request of its chunk has, about 105 bytes for a streamed request to an
 * attached server. Strings that repeat (hosts, sessions, finish reasons, error classes) are stored once and referenced
 * by number; request ids of the form `${requestIdPrefix}${integer}` are stored as the integer.
 * Absent values are NaN (times) or a sentinel (integers), so `get` gives back exactly the record that was added.
 * Fields this store does not know are kept aside per record, so nothing is ever lost. Per-token gaps go end to end
 * into shared blocks of doubles (8 bytes a gap, exact), not into one array per record: a small typed array per record
 * costs about 200 bytes of headers before its first gap.
 *
 * Which fields are kept, and how, follows the column table (src/analysis/record-columns.ts) by kind.
 *
 * The load generator (run-load.ts) keeps every finished request here while the run goes on.
 */
const CHUNK_ROWS = 4096;
/** Per-token gaps of all records, end to end, in blocks of this many (a record's gaps may straddle two blocks). */
const GAP_BLOCK = 1 << 16;
const ABSENT_INT = -2147483648;

/** How each stored column of the table (src/analysis/record-columns.ts) is kept, by its kind. */
const fieldsWhere = (test: (column: StoredColumn) => boolean): string[] => STORED_COLUMNS.filter((column) => column.field !== 'requestId' && test(column)).map((column) => column.field);
/** Instants and measured quantities: a double each, NaN = absent. */
const FLOAT_FIELDS = fieldsWhere((column) => column.kind === 'time' || column.kind === 'float');
/** Counts: an int32 each, ABSENT_INT = absent (a value that does not fit is kept aside, exactly). */
const INTEGER_FIELDS = fieldsWhere((column) => column.kind === 'count');
/** Strings with few distinct values (hosts, sessions, finish reasons, error classes): an index into one string table. */
const INTERNED_FIELDS = fieldsWhere((column) => column.kind === 'string' && column.repeats === true);
/** Strings that rarely repeat and are often absent (error messages): kept aside per row. */
const TEXT_FIELDS = fieldsWhere((column) => column.kind === 'string' && column.repeats !== true);
/** Booleans: two bits each in the row's flags (present, value), after the warmup bit. */
const BOOLEAN_FIELDS = fieldsWhere((column) => column.kind === 'boolean');

const FLAG_WARMUP = 1;
const presentBit = (field: number): number => 1 << (1 + 2 * field);
const valueBit = (field: number): number => 1 << (2 + 2 * field);
const FLAG_BITS = 1 + 2 * BOOLEAN_FIELDS.length;
/** The flags of a chunk's rows: one byte while the booleans fit (they do: success, held for concurrency). */
type FlagArray = Uint8Array | Uint16Array | Uint32Array;
const newFlags = (): FlagArray => (FLAG_BITS <= 8 ? new Uint8Array(CHUNK_ROWS) : FLAG_BITS <= 16 ? new Uint16Array(CHUNK_ROWS) : new Uint32Array(CHUNK_ROWS));

const KNOWN_FIELDS = new Set<string>([...STORED_COLUMNS.map((column) => column.field), ...NON_COLUMN_FIELDS]);

/**
 * One chunk of rows. A field's column is allocated when the chunk's first value of that field comes, filled with the
 * field's absent marker: rows are written once, so a row that lacks the field keeps the marker. A field no request
 * has (server-side trace instants without tracing, say) costs nothing, instead of 4-8 bytes a request.
 */
interface Chunk {
  floats: (Float64Array | undefined)[]; // one per FLOAT_FIELDS entry, NaN = absent
  integers: (Int32Array | undefined)[]; // one per INTEGER_FIELDS entry, ABSENT_INT = absent
  interned: (Int32Array | undefined)[]; // one per INTERNED_FIELDS entry, -1 = absent
  requestIdNumbers: Float64Array; // the id's integer suffix, or NaN when the id is kept as a string
  gapStarts: Float64Array; // where the row's per-token gaps start in the gap blocks (NaN: the record has none)
  gapCounts: Int32Array;
  flags: FlagArray;
}

function newChunk(): Chunk {
  return {
    floats: new Array<Float64Array | undefined>(FLOAT_FIELDS.length).fill(undefined),
    integers: new Array<Int32Array | undefined>(INTEGER_FIELDS.length).fill(undefined),
    interned: new Array<Int32Array | undefined>(INTERNED_FIELDS.length).fill(undefined),
    requestIdNumbers: new Float64Array(CHUNK_ROWS),
    gapStarts: new Float64Array(CHUNK_ROWS),
    gapCounts: new Int32Array(CHUNK_ROWS),
    flags: newFlags(),
  };
}

/** A string table: each distinct string stored once. */
class StringTable {
  readonly #indexOf = new Map<string, number>();
  readonly #strings: string[] = [];

  intern(value: string): number {
    let index = this.#indexOf.get(value);
    if (index === undefined) {
      index = this.#strings.length;
      this.#strings.push(value);
      this.#indexOf.set(value, index);
    }
    return index;
  }

  lookup(index: number): string {
    return this.#strings[index] as string;
  }
}

export class RecordStore {
  readonly #requestIdPrefix: string;
  readonly #chunks: Chunk[] = [];
  readonly #strings = new StringTable();
  /** Rare or unbounded values, by row: ids that do not fit the prefix, text fields (one map each), unknown fields. */
  readonly #requestIdStrings = new Map<number, string>();
  readonly #texts: Map<number, string>[] = TEXT_FIELDS.map(() => new Map<number, string>());
  readonly #extras = new Map<number, Record<string, unknown>>();
  readonly #gapBlocks: Float64Array[] = [];
  #gapsUsed = 0;
  #size = 0;

  constructor(options: { requestIdPrefix?: string } = {}) {
    this.#requestIdPrefix = options.requestIdPrefix ?? '';
  }

  get size(): number {
    return this.#size;
  }

  /** Stores a record; returns its row number. */
  add(record: RequestRecord): number {
    const row = this.#size++;
    const chunkIndex = Math.floor(row / CHUNK_ROWS);
    if (chunkIndex === this.#chunks.length) this.#chunks.push(newChunk());
    const chunk = this.#chunks[chunkIndex] as Chunk;
    const slot = row % CHUNK_ROWS;
    const fields = record as unknown as Record<string, unknown>;

    // A value of another type than its column's (a hand-edited requests.jsonl, say) is kept aside, exactly.
    for (let field = 0; field < FLOAT_FIELDS.length; field++) {
      const value = fields[FLOAT_FIELDS[field] as string];
      if (value === undefined) continue;
      if (typeof value !== 'number') {
        this.#extra(row)[FLOAT_FIELDS[field] as string] = value;
        continue;
      }
      if (Number.isNaN(value)) continue;
      let column = chunk.floats[field];
      if (column === undefined) chunk.floats[field] = column = new Float64Array(CHUNK_ROWS).fill(Number.NaN);
      column[slot] = value;
    }
    for (let field = 0; field < INTEGER_FIELDS.length; field++) {
      const value = fields[INTEGER_FIELDS[field] as string];
      if (value === undefined) continue;
      const fits = typeof value === 'number' && Number.isInteger(value) && value > ABSENT_INT && value <= 2147483647;
      if (!fits) {
        this.#extra(row)[INTEGER_FIELDS[field] as string] = value;
        continue;
      }
      let column = chunk.integers[field];
      if (column === undefined) chunk.integers[field] = column = new Int32Array(CHUNK_ROWS).fill(ABSENT_INT);
      column[slot] = value;
    }
    for (let field = 0; field < INTERNED_FIELDS.length; field++) {
      const value = fields[INTERNED_FIELDS[field] as string];
      if (value === undefined) continue;
      if (typeof value !== 'string') {
        this.#extra(row)[INTERNED_FIELDS[field] as string] = value;
        continue;
      }
      let column = chunk.interned[field];
      if (column === undefined) chunk.interned[field] = column = new Int32Array(CHUNK_ROWS).fill(-1);
      column[slot] = this.#strings.intern(value);
    }
    for (let field = 0; field < TEXT_FIELDS.length; field++) {
      const value = fields[TEXT_FIELDS[field] as string];
      if (value === undefined) continue;
      if (typeof value === 'string') (this.#texts[field] as Map<number, string>).set(row, value);
      else this.#extra(row)[TEXT_FIELDS[field] as string] = value;
    }
    chunk.requestIdNumbers[slot] = this.#requestIdNumber(record.requestId);
    if (Number.isNaN(chunk.requestIdNumbers[slot])) this.#requestIdStrings.set(row, record.requestId);
    let flags = record.warmup ? FLAG_WARMUP : 0;
    for (let field = 0; field < BOOLEAN_FIELDS.length; field++) {
      const value = fields[BOOLEAN_FIELDS[field] as string];
      if (value === undefined) continue;
      if (typeof value === 'boolean') flags |= presentBit(field) | (value ? valueBit(field) : 0);
      else this.#extra(row)[BOOLEAN_FIELDS[field] as string] = value;
    }
    chunk.flags[slot] = flags;
    const gaps = record.interTokenLatencies;
    chunk.gapStarts[slot] = gaps === undefined ? Number.NaN : this.#gapsUsed;
    chunk.gapCounts[slot] = gaps === undefined ? 0 : gaps.length;
    if (gaps !== undefined) this.#appendGaps(gaps);
    for (const key of Object.keys(fields)) {
      if (!KNOWN_FIELDS.has(key) && fields[key] !== undefined) this.#extra(row)[key] = fields[key];
    }
    return row;
  }

  /** The record at a row, rebuilt as an object (absent fields stay absent). */
  get(row: number): RequestRecord {
    if (!(Number.isInteger(row) && row >= 0 && row < this.#size)) throw new RangeError(`row ${row} is outside 0..${this.#size - 1}`);
    const chunk = this.#chunks[Math.floor(row / CHUNK_ROWS)] as Chunk;
    const slot = row % CHUNK_ROWS;
    const flags = chunk.flags[slot] as number;
    const requestIdNumber = chunk.requestIdNumbers[slot] as number;
    const record: Record<string, unknown> = {
      requestId: Number.isNaN(requestIdNumber) ? this.#requestIdStrings.get(row) : `${this.#requestIdPrefix}${requestIdNumber}`,
      warmup: (flags & FLAG_WARMUP) !== 0,
    };
    for (let field = 0; field < BOOLEAN_FIELDS.length; field++) {
      if ((flags & presentBit(field)) !== 0) record[BOOLEAN_FIELDS[field] as string] = (flags & valueBit(field)) !== 0;
    }
    for (let field = 0; field < FLOAT_FIELDS.length; field++) {
      const value = chunk.floats[field]?.[slot];
      if (value !== undefined && !Number.isNaN(value)) record[FLOAT_FIELDS[field] as string] = value;
    }
    for (let field = 0; field < INTEGER_FIELDS.length; field++) {
      const value = chunk.integers[field]?.[slot];
      if (value !== undefined && value !== ABSENT_INT) record[INTEGER_FIELDS[field] as string] = value;
    }
    for (let field = 0; field < INTERNED_FIELDS.length; field++) {
      const index = chunk.interned[field]?.[slot];
      if (index !== undefined && index >= 0) record[INTERNED_FIELDS[field] as string] = this.#strings.lookup(index);
    }
    for (let field = 0; field < TEXT_FIELDS.length; field++) {
      const value = (this.#texts[field] as Map<number, string>).get(row);
      if (value !== undefined) record[TEXT_FIELDS[field] as string] = value;
    }
    const gapStart = chunk.gapStarts[slot] as number;
    if (!Number.isNaN(gapStart)) record['interTokenLatencies'] = this.#readGaps(gapStart, chunk.gapCounts[slot] as number);
    const extras = this.#extras.get(row);
    if (extras !== undefined) Object.assign(record, extras);
    return record as unknown as RequestRecord;
  }

  /** One time (or other float) column (epoch seconds, NaN where absent) for fast analysis without building objects. */
  timeColumn(field: keyof RequestRecord): Float64Array {
    const fieldIndex = FLOAT_FIELDS.indexOf(field);
    if (fieldIndex < 0) throw new RangeError(`"${field}" is not a time or float column of the record (src/analysis/record-columns.ts)`);
    const column = new Float64Array(this.#size);
    for (let row = 0; row < this.#size; row++) {
      const chunk = this.#chunks[Math.floor(row / CHUNK_ROWS)] as Chunk;
      column[row] = chunk.floats[fieldIndex]?.[row % CHUNK_ROWS] ?? Number.NaN;
    }
    return column;
  }

  *[Symbol.iterator](): IterableIterator<RequestRecord> {
    for (let row = 0; row < this.#size; row++) yield this.get(row);
  }

  toArray(): RequestRecord[] {
    return Array.from(this);
  }

  /** Bytes held by the columns, per stored record (the chunk not yet full included; per-token gaps not). */
  fixedBytesPerRecord(): number {
    let bytes = 0;
    for (const chunk of this.#chunks) {
      for (const column of [...chunk.floats, ...chunk.integers, ...chunk.interned]) bytes += column?.byteLength ?? 0;
      bytes += chunk.requestIdNumbers.byteLength + chunk.gapStarts.byteLength + chunk.gapCounts.byteLength + chunk.flags.byteLength;
    }
    return this.#size === 0 ? 0 : bytes / this.#size;
  }

  #appendGaps(gaps: readonly number[]): void {
    for (let index = 0; index < gaps.length; index++) {
      const position = this.#gapsUsed++;
      const block = Math.floor(position / GAP_BLOCK);
      if (block === this.#gapBlocks.length) this.#gapBlocks.push(new Float64Array(GAP_BLOCK));
      (this.#gapBlocks[block] as Float64Array)[position % GAP_BLOCK] = gaps[index] as number;
    }
  }

  #readGaps(start: number, count: number): number[] {
    const gaps = new Array<number>(count);
    for (let index = 0; index < count; index++) {
      const position = start + index;
      gaps[index] = (this.#gapBlocks[Math.floor(position / GAP_BLOCK)] as Float64Array)[position % GAP_BLOCK] as number;
    }
    return gaps;
  }

  #requestIdNumber(requestId: string): number {
    if (!requestId.startsWith(this.#requestIdPrefix)) return Number.NaN;
    const suffix = requestId.slice(this.#requestIdPrefix.length);
    // Only canonical integers round-trip: "007" or "1e3" would come back different.
    if (!/^(0|[1-9][0-9]{0,14})$/.test(suffix)) return Number.NaN;
    return Number(suffix);
  }

  #extra(row: number): Record<string, unknown> {
    let extras = this.#extras.get(row);
    if (extras === undefined) {
      extras = {};
      this.#extras.set(row, extras);
    }
    return extras;
  }
}
