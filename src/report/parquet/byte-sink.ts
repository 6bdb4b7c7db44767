/**
 * A growing little-endian byte buffer for requests.parquet: numbers are written through one DataView, strings as UTF-8
 * straight into the buffer (no per-string allocation). `take` hands out what was written and starts an empty buffer,
 * so a file is built as a list of pieces (one per column chunk) and copied once at the end.
 */
export class ByteSink {
  #buffer: Buffer;
  #view: DataView;
  #length = 0;

  constructor(initialBytes = 4096) {
    this.#buffer = Buffer.allocUnsafe(initialBytes);
    this.#view = new DataView(this.#buffer.buffer, this.#buffer.byteOffset, this.#buffer.byteLength);
  }

  get length(): number {
    return this.#length;
  }

  /** Room for `bytes` more bytes. */
  reserve(bytes: number): void {
    const needed = this.#length + bytes;
    if (needed <= this.#buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(needed, this.#buffer.length * 2));
    this.#buffer.copy(grown, 0, 0, this.#length);
    this.#buffer = grown;
    this.#view = new DataView(grown.buffer, grown.byteOffset, grown.byteLength);
  }

  byte(value: number): void {
    this.reserve(1);
    this.#buffer[this.#length++] = value;
  }

  bytes(value: Uint8Array): void {
    this.reserve(value.length);
    this.#buffer.set(value, this.#length);
    this.#length += value.length;
  }

  int32(value: number): void {
    this.reserve(4);
    this.#view.setInt32(this.#length, value, true);
    this.#length += 4;
  }

  float64(value: number): void {
    this.reserve(8);
    this.#view.setFloat64(this.#length, value, true);
    this.#length += 8;
  }

  /** An unsigned LEB128 varint of a non-negative integer up to 2^53 (arithmetic, not 32-bit shifts). */
  varint(value: number): void {
    this.reserve(8);
    let rest = value;
    while (rest >= 0x80) {
      this.#buffer[this.#length++] = (rest % 0x80) | 0x80;
      rest = Math.floor(rest / 0x80);
    }
    this.#buffer[this.#length++] = rest;
  }

  /** A string as UTF-8 after its byte length as a 4-byte little-endian integer (parquet's PLAIN BYTE_ARRAY). */
  lengthPrefixedUtf8(value: string): void {
    // A UTF-16 code unit takes at most 3 bytes in UTF-8 (a surrogate pair, two units, takes 4).
    this.reserve(4 + value.length * 3);
    const written = this.#buffer.write(value, this.#length + 4, 'utf8');
    this.#view.setInt32(this.#length, written, true);
    this.#length += 4 + written;
  }

  /** Writes a 4-byte little-endian integer at an earlier position (a length known only after what follows it). */
  patchInt32(position: number, value: number): void {
    this.#view.setInt32(position, value, true);
  }

  /** What was written (a copy, so the buffer can be reused), and an empty sink. */
  take(): Uint8Array {
    const piece = Uint8Array.prototype.slice.call(this.#buffer, 0, this.#length);
    this.#length = 0;
    return piece;
  }
}
