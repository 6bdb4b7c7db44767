import { TextBytesWriter } from '../../utils/text-bytes-writer.js';
import { writeVarint } from './little-endian-bytes.js';

/** Type codes of Thrift's compact protocol, as parquet's page headers and footer use them. */
export const CompactType = { BooleanTrue: 1, BooleanFalse: 2, I32: 5, I64: 6, Binary: 8, List: 9, Struct: 12 } as const;
export type CompactTypeCode = (typeof CompactType)[keyof typeof CompactType];

/** ZigZag: small negative and positive integers both get short varints. Integers up to 2^52 in magnitude. */
function zigZag(value: number): number {
  return value >= 0 ? value * 2 : -value * 2 - 1;
}

/**
 * Writes Thrift compact-protocol structs: the encoding of parquet's page headers and file footer. Each field header
 * carries the distance from the previous field id of the same struct, so the writer keeps one "last field id" per open
 * struct. Fields must be written in increasing id order within a struct (as parquet's definitions number them).
 */
export class ThriftCompactWriter {
  readonly sink: TextBytesWriter;
  readonly #lastFieldIds: number[] = [0];

  constructor(sink: TextBytesWriter = new TextBytesWriter(256)) {
    this.sink = sink;
  }

  #fieldHeader(id: number, type: CompactTypeCode): void {
    const last = this.#lastFieldIds.length - 1;
    const delta = id - (this.#lastFieldIds[last] as number);
    if (delta > 0 && delta <= 15) this.sink.byte((delta << 4) | type);
    else {
      this.sink.byte(type);
      writeVarint(this.sink, zigZag(id));
    }
    this.#lastFieldIds[last] = id;
  }

  i32(id: number, value: number): void {
    this.#fieldHeader(id, CompactType.I32);
    writeVarint(this.sink, zigZag(value));
  }

  /** An i64 field, from a number (parquet's sizes and offsets stay far below 2^53). */
  i64(id: number, value: number): void {
    this.#fieldHeader(id, CompactType.I64);
    writeVarint(this.sink, zigZag(value));
  }

  boolean(id: number, value: boolean): void {
    this.#fieldHeader(id, value ? CompactType.BooleanTrue : CompactType.BooleanFalse);
  }

  string(id: number, value: string): void {
    this.#fieldHeader(id, CompactType.Binary);
    this.#stringValue(value);
  }

  binary(id: number, value: Uint8Array): void {
    this.#fieldHeader(id, CompactType.Binary);
    writeVarint(this.sink, value.length);
    this.sink.bytes(value);
  }

  /** Opens a struct-valued field; close it with `endStruct`. */
  beginStruct(id: number): void {
    this.#fieldHeader(id, CompactType.Struct);
    this.#lastFieldIds.push(0);
  }

  endStruct(): void {
    this.sink.byte(0);
    this.#lastFieldIds.pop();
  }

  /** Opens a list-valued field of `size` elements; write them with the element methods below. */
  beginList(id: number, elementType: CompactTypeCode, size: number): void {
    this.#fieldHeader(id, CompactType.List);
    if (size < 15) this.sink.byte((size << 4) | elementType);
    else {
      this.sink.byte(0xf0 | elementType);
      writeVarint(this.sink, size);
    }
  }

  /** A struct element of a list; close it with `endStruct`. */
  beginStructElement(): void {
    this.#lastFieldIds.push(0);
  }

  i32Element(value: number): void {
    writeVarint(this.sink, zigZag(value));
  }

  stringElement(value: string): void {
    this.#stringValue(value);
  }

  /** Ends the outermost struct (a page header or the footer, which have no field header of their own). */
  end(): void {
    this.sink.byte(0);
  }

  #stringValue(value: string): void {
    const bytes = Buffer.from(value, 'utf8');
    writeVarint(this.sink, bytes.length);
    this.sink.bytes(bytes);
  }
}
