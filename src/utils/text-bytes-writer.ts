import { decimalDigitCount, decimalOfUnits } from './decimal-text.js';

/**
 * Text built as bytes in one growing buffer: the writer of requests.jsonl and requests.csv, which format tens of
 * numbers for each of a million records (requests.parquet's encoder writes its binary values into it too). Formatting a number as a string and joining strings allocated about 11 KB
 * per record (most of it the per-token gaps), which the young generation then had to collect; writing digits straight
 * into bytes allocates nothing per number.
 *
 * Every method writes exactly the text the string formatting it replaces writes (`String(n)`, the decimal of a count
 * of micro- or nanoseconds), falling back to that formatting wherever the integer fast path does not hold.
 */
export class TextBytesWriter {
  #bytes: Buffer;
  #length = 0;

  constructor(initialBytes = 1 << 16) {
    this.#bytes = Buffer.allocUnsafe(initialBytes);
  }

  /** Bytes written so far. */
  get length(): number {
    return this.#length;
  }

  /** A copy of the bytes written so far; the writer is emptied for reuse. */
  take(): Buffer {
    const copy = Buffer.from(this.#bytes.subarray(0, this.#length));
    this.#length = 0;
    return copy;
  }

  /** The bytes written so far as text (UTF-8); the writer is emptied for reuse. */
  takeText(): string {
    const text = this.#bytes.toString('utf8', 0, this.#length);
    this.#length = 0;
    return text;
  }

  /** Bytes prepared once (a JSON key with its punctuation, say). */
  bytes(bytes: Uint8Array): void {
    this.#reserve(bytes.length);
    this.#bytes.set(bytes, this.#length);
    this.#length += bytes.length;
  }

  /** Replaces one byte already written. */
  setByteAt(at: number, code: number): void {
    this.#bytes[at] = code;
  }

  byte(code: number): void {
    this.#reserve(1);
    this.#bytes[this.#length++] = code;
  }

  /** Any text, as UTF-8. */
  text(text: string): void {
    // A UTF-16 code unit takes at most 3 bytes in UTF-8.
    this.#reserve(text.length * 3);
    this.#length += this.#bytes.write(text, this.#length, 'utf8');
  }

  /** A number as `String(value)` writes it (so non-finite numbers as `NaN`, `Infinity`: callers decide first). */
  number(value: number): void {
    if (Number.isSafeInteger(value)) {
      if (value < 0) {
        this.byte(MINUS);
        this.#digits(-value);
      } else {
        // -0 lands here too, and String(-0) is "0".
        this.#digits(value === 0 ? 0 : value);
      }
      return;
    }
    this.text(String(value));
  }

  /** Numbers joined by one separator byte, as `Array.prototype.join` writes them (a prompt's token ids, say). */
  joined(values: ArrayLike<number>, separator: number): void {
    for (let index = 0; index < values.length; index++) {
      if (index > 0) this.byte(separator);
      const value = values[index] as number;
      // Token ids are non-negative int32s: their digits without the general path's checks.
      if (value >= 0 && value < INT32_LIMIT && (value | 0) === value) this.#smallDigits(value);
      else this.number(value);
    }
  }

  /** The bytes written so far as Latin-1 text (for bytes written as ASCII); the writer is emptied for reuse. */
  takeAscii(): string {
    const text = this.#bytes.toString('latin1', 0, this.#length);
    this.#length = 0;
    return text;
  }

  /**
   * `units / 10^width` in decimal without trailing zeros (`1500000` µs with width 6 is `1.5`): the text of
   * `decimalOfUnits`, which stays the reference and writes the values this fast path does not take.
   */
  fixedPoint(units: number, width: number): void {
    if (!Number.isSafeInteger(units)) {
      this.text(decimalOfUnits(units, POWERS_OF_TEN[width] as number, width));
      return;
    }
    if (units === 0) {
      this.byte(ZERO);
      return;
    }
    let absolute = units;
    if (units < 0) {
      this.byte(MINUS);
      absolute = -units;
    }
    const scale = POWERS_OF_TEN[width] as number;
    const whole = Math.floor(absolute / scale);
    this.#digits(whole);
    // Below 10^9, so int32 arithmetic from here on (a double's % is a library call: it was most of this method's time).
    let fraction = (absolute - whole * scale) | 0;
    if (fraction === 0) return;
    let fractionDigits = width;
    while (fraction % 10 === 0) {
      fraction = (fraction / 10) | 0;
      fractionDigits--;
    }
    this.#reserve(fractionDigits + 1);
    const bytes = this.#bytes;
    bytes[this.#length] = POINT;
    const end = this.#length + 1 + fractionDigits;
    for (let at = end - 1; at > this.#length; at--) {
      const rest = (fraction / 10) | 0;
      bytes[at] = ZERO + (fraction - rest * 10);
      fraction = rest;
    }
    this.#length = end;
  }

  /** The decimal digits of a non-negative safe integer. */
  #digits(value: number): void {
    if (value < INT32_LIMIT) {
      this.#smallDigits(value | 0);
      return;
    }
    let count = 10;
    for (let bound = 1e10; value >= bound && count < 16; bound *= 10) count++;
    this.#reserve(count);
    const bytes = this.#bytes;
    let rest = value;
    for (let at = this.#length + count - 1; at >= this.#length; at--) {
      const next = Math.floor(rest / 10);
      bytes[at] = ZERO + (rest - next * 10);
      rest = next;
    }
    this.#length += count;
  }

  /** The decimal digits of a non-negative int32, in int32 arithmetic. */
  #smallDigits(value: number): void {
    const count = decimalDigitCount(value);
    this.#reserve(count);
    const bytes = this.#bytes;
    let rest = value;
    for (let at = this.#length + count - 1; at >= this.#length; at--) {
      const next = (rest / 10) | 0;
      bytes[at] = ZERO + (rest - next * 10);
      rest = next;
    }
    this.#length += count;
  }

  #reserve(count: number): void {
    if (this.#length + count <= this.#bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#bytes.length * 2, this.#length + count));
    this.#bytes.copy(grown, 0, 0, this.#length);
    this.#bytes = grown;
  }
}

/** ASCII text as bytes, for the fixed pieces handed to `TextBytesWriter.bytes`. */
export function asciiBytes(text: string): Uint8Array {
  return Uint8Array.from(text, (character) => character.charCodeAt(0));
}

const ZERO = 0x30;
const MINUS = 0x2d;
const POINT = 0x2e;
/** Values below this take the int32 path. */
const INT32_LIMIT = 2 ** 31;
const POWERS_OF_TEN = Array.from({ length: 16 }, (_, exponent) => 10 ** exponent);
