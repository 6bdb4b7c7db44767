import type { TextBytesWriter } from '../../utils/text-bytes-writer.js';

// Parquet's binary values, written into the project's growing byte buffer (TextBytesWriter, which also writes
// requests.csv and requests.jsonl): little-endian integers and doubles, LEB128 varints, length-prefixed UTF-8.

const scratch = new DataView(new ArrayBuffer(8));
const scratchBytes = new Uint8Array(scratch.buffer);

/** A 4-byte little-endian integer. */
export function writeInt32(out: TextBytesWriter, value: number): void {
  out.byte(value & 0xff);
  out.byte((value >>> 8) & 0xff);
  out.byte((value >>> 16) & 0xff);
  out.byte((value >>> 24) & 0xff);
}

/** Overwrites the 4-byte little-endian integer at `at` (a length known only after what follows it). */
export function patchInt32(out: TextBytesWriter, at: number, value: number): void {
  for (let byte = 0; byte < 4; byte++) out.setByteAt(at + byte, (value >>> (8 * byte)) & 0xff);
}

/** An 8-byte little-endian IEEE 754 double. */
export function writeFloat64(out: TextBytesWriter, value: number): void {
  scratch.setFloat64(0, value, true);
  out.bytes(scratchBytes);
}

/** The little-endian bytes of a double or a 32-bit integer, on their own (the footer's statistics hold them so). */
export function numberBytes(value: number, type: 'DOUBLE' | 'INT32'): Uint8Array {
  if (type === 'DOUBLE') scratch.setFloat64(0, value, true);
  else scratch.setInt32(0, value, true);
  return scratchBytes.slice(0, type === 'DOUBLE' ? 8 : 4);
}

/** An unsigned LEB128 varint of a non-negative integer up to 2^53 (arithmetic, not 32-bit shifts). */
export function writeVarint(out: TextBytesWriter, value: number): void {
  let rest = value;
  while (rest >= 0x80) {
    out.byte((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.byte(rest);
}

/** A string as UTF-8 after its byte length as a 4-byte little-endian integer (parquet's PLAIN BYTE_ARRAY). */
export function writeLengthPrefixedUtf8(out: TextBytesWriter, value: string): void {
  const lengthAt = out.length;
  writeInt32(out, 0);
  out.text(value);
  patchInt32(out, lengthAt, out.length - lengthAt - 4);
}
