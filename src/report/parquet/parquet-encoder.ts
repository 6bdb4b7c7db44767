import { TextBytesWriter } from '../../utils/text-bytes-writer.js';
import { numberBytes, patchInt32, writeFloat64, writeInt32, writeLengthPrefixedUtf8, writeVarint } from './little-endian-bytes.js';
import { ABSENT_BOOLEAN, type PackedColumn, type ParquetColumnType, type ParquetHeader } from './packed-columns.js';
import { CompactType, ThriftCompactWriter } from './thrift-compact.js';

// Codes from parquet-format's parquet.thrift.
const PHYSICAL_TYPE: Record<ParquetColumnType, number> = { BOOLEAN: 0, INT32: 1, DOUBLE: 5, STRING: 6 /* BYTE_ARRAY */ };
const PLAIN = 0;
const RLE = 3;
const RLE_DICTIONARY = 8;
const DATA_PAGE = 0;
const DICTIONARY_PAGE = 2;
const OPTIONAL = 1;
const CONVERTED_UTF8 = 0;
const UNCOMPRESSED = 0;
const FILE_FORMAT_VERSION = 2;
const MAGIC = 'PAR1';
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Where a column chunk sits in the file and what it holds: the footer's ColumnMetaData. */
interface ColumnChunkPlace {
  type: ParquetColumnType;
  dictionary: boolean;
  valueCount: number;
  bytes: number;
  dataPageOffset: number;
  dictionaryPageOffset?: number;
  nullCount: number;
  /** Smallest and largest present value of a numeric chunk, as the footer's statistics store them. */
  minimum?: Uint8Array;
  maximum?: Uint8Array;
}

interface RowGroupPlace {
  rowCount: number;
  offset: number;
  bytes: number;
  columns: ColumnChunkPlace[];
}

/**
 * Values `[from, to)`, each `bitWidth` bits, packed eight at a time, first value in the lowest bits (parquet's
 * bit-packed order); a last group of fewer than eight is padded with zeros.
 */
function packBits(sink: TextBytesWriter, values: Uint8Array | Int32Array, from: number, to: number, bitWidth: number): void {
  const groups = Math.ceil((to - from) / 8);
  let accumulator = 0;
  let accumulatedBits = 0;
  for (let index = from; index < to; index++) {
    accumulator |= (values[index] as number) << accumulatedBits;
    accumulatedBits += bitWidth;
    while (accumulatedBits >= 8) {
      sink.byte(accumulator & 0xff);
      accumulator >>>= 8;
      accumulatedBits -= 8;
    }
  }
  // Pad the last group to eight values: the bits left to write are then a whole number of bytes.
  accumulatedBits += (groups * 8 - (to - from)) * bitWidth;
  while (accumulatedBits > 0) {
    sink.byte(accumulator & 0xff);
    accumulator >>>= 8;
    accumulatedBits -= 8;
  }
}

/** Shortest run of equal values written as one RLE run rather than bit-packed. */
const MIN_RLE_RUN = 8;

/**
 * Parquet's RLE/bit-packed hybrid encoding of `values[from, to)` (definition levels, dictionary indices): runs of at
 * least MIN_RLE_RUN equal values as RLE runs, the rest bit-packed. A bit-packed stretch holds a multiple of eight values
 * except at the very end (a reader would take padding in the middle for values), so a run first lends values to the
 * stretch before it until that one is a whole number of groups.
 */
function writeHybrid(sink: TextBytesWriter, values: Uint8Array | Int32Array, from: number, to: number, bitWidth: number): void {
  let literalStart = from;
  let index = from;
  while (index < to) {
    const value = values[index] as number;
    let runEnd = index + 1;
    while (runEnd < to && values[runEnd] === value) runEnd++;
    const runStart = index + ((8 - ((index - literalStart) % 8)) % 8);
    if (runEnd - runStart >= MIN_RLE_RUN) {
      if (runStart > literalStart) {
        writeVarint(sink, ((runStart - literalStart) / 8) * 2 + 1);
        packBits(sink, values, literalStart, runStart, bitWidth);
      }
      writeVarint(sink, (runEnd - runStart) * 2);
      for (let byte = 0; byte < Math.ceil(bitWidth / 8); byte++) sink.byte((value >>> (8 * byte)) & 0xff);
      literalStart = runEnd;
    }
    index = runEnd;
  }
  if (to > literalStart) {
    writeVarint(sink, Math.ceil((to - literalStart) / 8) * 2 + 1);
    packBits(sink, values, literalStart, to, bitWidth);
  }
}

/**
 * Encodes requests.parquet: every column OPTIONAL (absent cells are nulls), one uncompressed data page (v1) per column
 * chunk, dictionary-encoded where values repeat (hosts, errors, finish reasons, token counts, durations) and PLAIN
 * where they do not (request ids, instants), with each chunk's null count and, for numbers, its min and max. Row groups
 * are encoded as they are added, and their bytes kept as pieces that `finish` copies once into the file.
 *
 * Why not a general parquet library: with one fixed, flat schema the encoder is a few loops over typed arrays, and a
 * general writer spent most of the output CPU of a 10,000-request run (its code compiled afresh in every run, plus
 * compression and statistics); pandas, pyarrow and polars read this layout as they read any other.
 */
export class ParquetEncoder {
  readonly #header: ParquetHeader;
  readonly #pieces: Uint8Array[] = [Buffer.from(MAGIC, 'latin1')];
  #offset = MAGIC.length;
  readonly #rowGroups: RowGroupPlace[] = [];
  /** A page's body, reused from page to page. */
  readonly #body = new TextBytesWriter(1 << 16);
  /** Presence of each cell of the column chunk being encoded (1 present, 0 absent), reused. */
  #present = new Uint8Array(0);

  constructor(header: ParquetHeader) {
    this.#header = header;
  }

  /** One row group: one packed column per column of the header, all of the same length. */
  add(rowGroup: readonly PackedColumn[]): void {
    const columns = this.#header.columns;
    if (rowGroup.length !== columns.length) throw new Error(`a parquet row group has ${rowGroup.length} columns, the schema ${columns.length}`);
    const rowCount = rowGroup.length === 0 ? 0 : (rowGroup[0] as PackedColumn).length;
    if (rowCount === 0) return;
    const offset = this.#offset;
    const places: ColumnChunkPlace[] = [];
    for (let position = 0; position < columns.length; position++) {
      const column = rowGroup[position] as PackedColumn;
      const { name, type, mostlyDistinct } = columns[position] as ParquetHeader['columns'][number];
      if (column.length !== rowCount) throw new Error(`parquet column "${name}" has ${column.length} values in a row group of ${rowCount} rows`);
      places.push(this.#columnChunk(column, type, rowCount, mostlyDistinct === true));
    }
    this.#rowGroups.push({ rowCount, offset, bytes: this.#offset - offset, columns: places });
  }

  /** The file's bytes, once every row group was added. */
  finish(): Uint8Array {
    const footer = this.#footer();
    const tail = new TextBytesWriter(8);
    writeInt32(tail, footer.length);
    tail.bytes(Buffer.from(MAGIC, 'latin1'));
    this.#pieces.push(footer, tail.take());
    return Buffer.concat(this.#pieces);
  }

  #columnChunk(column: PackedColumn, type: ParquetColumnType, rowCount: number, mostlyDistinct: boolean): ColumnChunkPlace {
    const start = this.#offset;
    if (this.#present.length < rowCount) this.#present = new Uint8Array(rowCount);
    const present = this.#present;
    const presentCount = markPresent(column, present, rowCount);
    const body = this.#body;
    const dictionary = type === 'BOOLEAN' || mostlyDistinct ? undefined : dictionaryOf(column as Float64Array | (string | null)[], present, rowCount, presentCount);
    let dictionaryPageOffset: number | undefined;
    if (dictionary !== undefined) {
      dictionaryPageOffset = this.#offset;
      if (type === 'STRING') for (const value of dictionary.values) writeLengthPrefixedUtf8(body, value as string);
      else if (type === 'INT32') for (const value of dictionary.values) writeInt32(body, value as number);
      else for (const value of dictionary.values) writeFloat64(body, value as number);
      this.#page(DICTIONARY_PAGE, dictionary.values.length, PLAIN);
    }
    const dataPageOffset = this.#offset;
    // Definition levels (1 present, 0 null; max level 1, so one bit each) after their byte length.
    const lengthAt = body.length;
    writeInt32(body, 0);
    writeHybrid(body, present, 0, rowCount, 1);
    patchInt32(body, lengthAt, body.length - lengthAt - 4);
    if (dictionary !== undefined) {
      const bitWidth = Math.max(1, 32 - Math.clz32(dictionary.values.length - 1));
      body.byte(bitWidth);
      writeHybrid(body, dictionary.indices, 0, presentCount, bitWidth);
    } else if (type === 'DOUBLE' || type === 'INT32') {
      // The present values, converted and laid out by the typed-array constructors (native loops, fast even before
      // the JIT has seen this code): little-endian in memory, as parquet stores them, on the machines Node runs on.
      const values = presentValues(column as Float64Array, present, rowCount, presentCount);
      const typed = type === 'DOUBLE' ? values : new Int32Array(values);
      if (LITTLE_ENDIAN) body.bytes(new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength));
      else if (type === 'DOUBLE') for (const value of typed) writeFloat64(body, value);
      else for (const value of typed) writeInt32(body, value);
    } else if (type === 'BOOLEAN') {
      const values = column as Uint8Array;
      const bits = new Uint8Array(presentCount);
      let next = 0;
      for (let index = 0; index < rowCount; index++) if (present[index] === 1) bits[next++] = values[index] as number;
      packBits(body, bits, 0, presentCount, 1);
    } else {
      const values = column as (string | null)[];
      for (let index = 0; index < rowCount; index++) if (present[index] === 1) writeLengthPrefixedUtf8(body, values[index] as string);
    }
    this.#page(DATA_PAGE, rowCount, dictionary !== undefined ? RLE_DICTIONARY : PLAIN);
    const bounds = type === 'DOUBLE' || type === 'INT32' ? numericBounds(column as Float64Array, present, rowCount, type) : undefined;
    return {
      ...bounds,
      nullCount: rowCount - presentCount,
      type,
      dictionary: dictionary !== undefined,
      valueCount: rowCount,
      bytes: this.#offset - start,
      dataPageOffset,
      ...(dictionaryPageOffset === undefined ? {} : { dictionaryPageOffset }),
    };
  }

  /** Writes the page in `#body` after its header (uncompressed: both sizes are the body's length). */
  #page(pageType: number, valueCount: number, encoding: number): void {
    const body = this.#body.take();
    const header = new ThriftCompactWriter(new TextBytesWriter(64));
    header.i32(1, pageType);
    header.i32(2, body.length);
    header.i32(3, body.length);
    if (pageType === DATA_PAGE) {
      header.beginStruct(5);
      header.i32(1, valueCount);
      header.i32(2, encoding);
      header.i32(3, RLE);
      header.i32(4, RLE);
      header.endStruct();
    } else {
      header.beginStruct(7);
      header.i32(1, valueCount);
      header.i32(2, encoding);
      header.endStruct();
    }
    header.end();
    const headerBytes = header.sink.take();
    this.#pieces.push(headerBytes, body);
    this.#offset += headerBytes.length + body.length;
  }

  /** FileMetaData: the schema, the row groups' column chunks, the key-value metadata (servelab.t0). */
  #footer(): Uint8Array {
    const columns = this.#header.columns;
    const footer = new ThriftCompactWriter(new TextBytesWriter(4096 + this.#rowGroups.length * columns.length * 64));
    footer.i32(1, FILE_FORMAT_VERSION);
    footer.beginList(2, CompactType.Struct, columns.length + 1);
    footer.beginStructElement();
    footer.string(4, 'root');
    footer.i32(5, columns.length);
    footer.endStruct();
    for (const { name, type } of columns) {
      footer.beginStructElement();
      footer.i32(1, PHYSICAL_TYPE[type]);
      footer.i32(3, OPTIONAL);
      footer.string(4, name);
      if (type === 'STRING') {
        footer.i32(6, CONVERTED_UTF8);
        footer.beginStruct(10);
        footer.beginStruct(1);
        footer.endStruct();
        footer.endStruct();
      }
      footer.endStruct();
    }
    let rowCount = 0;
    for (const group of this.#rowGroups) rowCount += group.rowCount;
    footer.i64(3, rowCount);
    footer.beginList(4, CompactType.Struct, this.#rowGroups.length);
    for (const group of this.#rowGroups) {
      footer.beginStructElement();
      footer.beginList(1, CompactType.Struct, group.columns.length);
      group.columns.forEach((chunk, position) => {
        footer.beginStructElement();
        footer.i64(2, chunk.dictionaryPageOffset ?? chunk.dataPageOffset);
        footer.beginStruct(3);
        footer.i32(1, PHYSICAL_TYPE[chunk.type]);
        const encodings = chunk.dictionary ? [PLAIN, RLE, RLE_DICTIONARY] : [PLAIN, RLE];
        footer.beginList(2, CompactType.I32, encodings.length);
        for (const encoding of encodings) footer.i32Element(encoding);
        footer.beginList(3, CompactType.Binary, 1);
        footer.stringElement((columns[position] as { name: string }).name);
        footer.i32(4, UNCOMPRESSED);
        footer.i64(5, chunk.valueCount);
        footer.i64(6, chunk.bytes);
        footer.i64(7, chunk.bytes);
        footer.i64(9, chunk.dataPageOffset);
        if (chunk.dictionaryPageOffset !== undefined) footer.i64(11, chunk.dictionaryPageOffset);
        footer.beginStruct(12);
        footer.i64(3, chunk.nullCount);
        if (chunk.maximum !== undefined) footer.binary(5, chunk.maximum);
        if (chunk.minimum !== undefined) footer.binary(6, chunk.minimum);
        footer.endStruct();
        footer.endStruct();
        footer.endStruct();
      });
      footer.i64(2, group.bytes);
      footer.i64(3, group.rowCount);
      footer.i64(5, group.offset);
      footer.i64(6, group.bytes);
      footer.endStruct();
    }
    footer.beginList(5, CompactType.Struct, 1);
    footer.beginStructElement();
    footer.string(1, 'servelab.t0');
    footer.string(2, String(this.#header.t0));
    footer.endStruct();
    footer.string(6, 'servelab');
    // Every column sorts by its type's own order (numbers as numbers, strings bytewise): readers may then trust the
    // statistics' min and max to skip row groups.
    footer.beginList(7, CompactType.Struct, columns.length);
    for (let position = 0; position < columns.length; position++) {
      footer.beginStructElement();
      footer.beginStruct(1);
      footer.endStruct();
      footer.endStruct();
    }
    footer.end();
    return footer.sink.take();
  }
}

/** Marks each cell present (1) or absent (0) and counts the present ones. */
function markPresent(column: PackedColumn, present: Uint8Array, rowCount: number): number {
  let count = 0;
  if (column instanceof Float64Array) {
    for (let index = 0; index < rowCount; index++) {
      const value = column[index] as number;
      const isPresent = value === value ? 1 : 0; // NaN marks an absent number
      present[index] = isPresent;
      count += isPresent;
    }
  } else if (column instanceof Uint8Array) {
    for (let index = 0; index < rowCount; index++) {
      const isPresent = column[index] === ABSENT_BOOLEAN ? 0 : 1;
      present[index] = isPresent;
      count += isPresent;
    }
  } else {
    for (let index = 0; index < rowCount; index++) {
      const isPresent = column[index] === null ? 0 : 1;
      present[index] = isPresent;
      count += isPresent;
    }
  }
  return count;
}

/**
 * The smallest and largest present value of a numeric chunk as little-endian bytes of its physical type (a zero minimum
 * written as -0 and a zero maximum as +0, as the format asks); nothing when every value is absent.
 */
function numericBounds(column: Float64Array, present: Uint8Array, rowCount: number, type: 'DOUBLE' | 'INT32'): { minimum: Uint8Array; maximum: Uint8Array } | undefined {
  let minimum = Number.POSITIVE_INFINITY;
  let maximum = Number.NEGATIVE_INFINITY;
  for (let index = 0; index < rowCount; index++) {
    if (present[index] === 0) continue;
    const value = column[index] as number;
    if (value < minimum) minimum = value;
    if (value > maximum) maximum = value;
  }
  if (minimum > maximum) return undefined;
  return { minimum: numberBytes(minimum === 0 ? -0 : minimum, type), maximum: numberBytes(maximum === 0 ? 0 : maximum, type) };
}

/** The present values of a numeric column chunk (the column itself when none is absent). */
function presentValues(column: Float64Array, present: Uint8Array, rowCount: number, presentCount: number): Float64Array {
  if (presentCount === rowCount) return column.length === rowCount ? column : column.subarray(0, rowCount);
  const values = new Float64Array(presentCount);
  let next = 0;
  for (let index = 0; index < rowCount; index++) if (present[index] === 1) values[next++] = column[index] as number;
  return values;
}

/** A column chunk's distinct present values in first-seen order, and each present cell's index among them. */
interface Dictionary {
  values: (number | string)[];
  indices: Int32Array;
}

/** Values looked at before building a dictionary. */
const DICTIONARY_SAMPLE = 64;

/**
 * Whether the first DICTIONARY_SAMPLE present values of a string column hold at most half as many distinct ones: a chunk
 * of unique strings (request ids) is then written plain without first building a dictionary of it.
 */
function repeatsInSample(column: Float64Array | readonly (string | null)[], present: Uint8Array, rowCount: number): boolean {
  const seen = new Set<number | string>();
  let looked = 0;
  for (let index = 0; index < rowCount && looked < DICTIONARY_SAMPLE; index++) {
    if (present[index] === 0) continue;
    seen.add(column[index] as number | string);
    looked++;
  }
  return seen.size * 2 <= looked;
}

/**
 * The chunk's dictionary, when its values repeat enough for one to pay (at most half as many distinct values as
 * present ones: hosts, errors, token counts, durations rounded to the microsecond); undefined otherwise (request ids,
 * instants).
 */
function dictionaryOf(column: Float64Array | readonly (string | null)[], present: Uint8Array, rowCount: number, presentCount: number): Dictionary | undefined {
  if (presentCount === 0) return undefined;
  if (Array.isArray(column) && !repeatsInSample(column, present, rowCount)) return undefined;
  const limit = Math.floor(presentCount / 2);
  const positions = new Map<number | string, number>();
  const values: (number | string)[] = [];
  const indices = new Int32Array(presentCount);
  let next = 0;
  for (let index = 0; index < rowCount; index++) {
    if (present[index] === 0) continue;
    const value = column[index] as number | string;
    let position = positions.get(value);
    if (position === undefined) {
      if (values.length === limit) return undefined;
      position = values.length;
      positions.set(value, position);
      values.push(value);
    }
    indices[next++] = position;
  }
  return { values, indices };
}
