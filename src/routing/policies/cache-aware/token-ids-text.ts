import { decimalDigitCount } from '../../../utils/decimal-text.js';

/**
 * A leaf tail of a routing key made of token ids joined by spaces (`routingKeyFromTokenIds`), read from the ids
 * themselves: nothing of the text is held. A virtual-time run keeps every prompt's ids for the whole run anyway, so a
 * view of them costs a few fields, where even packed text cost half a byte per character (a million 512-token prompts
 * held 1.45 GB of packed tails, and packing them was 4% of the run).
 *
 * The ids must not change afterwards. Reads like the string it stands for (`length`, `charCodeAt`); `head` and `tail`
 * cut it, as PackedText's do.
 */
export class TokenIdsText {
  readonly #ids: ArrayLike<number>;
  /** The id the text starts in, and how many of that id's characters (its digits, then the space) come before. */
  readonly #id: number;
  readonly #skip: number;
  readonly length: number;

  private constructor(ids: ArrayLike<number>, id: number, skip: number, length: number) {
    this.#ids = ids;
    this.#id = id;
    this.#skip = skip;
    this.length = length;
  }

  /**
   * The key's characters from `from` on, as a view of `ids`; undefined when some id is not a whole number in
   * [0, 2^31) (whose text is not plain digits) or when `keyLength` is not the length of the ids' joined text (the key
   * was not made from them).
   */
  static at(ids: ArrayLike<number>, from: number, keyLength: number): TokenIdsText | undefined {
    let position = 0;
    let startId = -1;
    let skip = 0;
    for (let index = 0; index < ids.length; index++) {
      const value = ids[index] as number;
      if (!(value >= 0 && value < 2 ** 31 && (value | 0) === value)) return undefined;
      const width = decimalDigitCount(value) + (index > 0 ? 1 : 0);
      // An id's characters are its space (but the first's) and its digits: the view starts in the id holding `from`.
      if (startId < 0 && position + width > from) {
        startId = index;
        skip = from - position;
      }
      position += width;
    }
    if (position !== keyLength || startId < 0) return undefined;
    return new TokenIdsText(ids, startId, skip, keyLength - from);
  }

  charCodeAt(index: number): number {
    if (index !== 0) return this.tail(index).charCodeAt(0);
    return charOf(this.#ids[this.#id] as number, this.#id, this.#skip);
  }

  /** The first `count` characters, as a string. */
  head(count: number): string {
    if (scratch.length < count) scratch = Buffer.allocUnsafe(count);
    let written = 0;
    for (let id = this.#id, skip = this.#skip; written < count; id++, skip = 0) {
      const value = this.#ids[id] as number;
      const width = decimalDigitCount(value) + (id > 0 ? 1 : 0);
      for (let character = skip; character < width && written < count; character++) scratch[written++] = charOf(value, id, character);
    }
    return scratch.toString('latin1', 0, count);
  }

  /** The characters from `from` on, still a view of the same ids. */
  tail(from: number): TokenIdsText {
    let id = this.#id;
    let skip = this.#skip + from;
    for (;;) {
      const width = decimalDigitCount(this.#ids[id] as number) + (id > 0 ? 1 : 0);
      if (skip < width) break;
      skip -= width;
      id++;
    }
    return new TokenIdsText(this.#ids, id, skip, this.length - from);
  }

  /** How many leading characters this shares with `text` from `offset` on. */
  sharedPrefixLength(text: string, offset: number): number {
    const limit = Math.min(this.length, text.length - offset);
    let matched = 0;
    for (let id = this.#id, skip = this.#skip; matched < limit; id++, skip = 0) {
      const value = this.#ids[id] as number;
      const width = decimalDigitCount(value) + (id > 0 ? 1 : 0);
      for (let character = skip; character < width && matched < limit; character++) {
        if (charOf(value, id, character) !== text.charCodeAt(offset + matched)) return matched;
        matched++;
      }
    }
    return matched;
  }
}

const SPACE = 0x20;
const ZERO = 0x30;
const POWERS_OF_TEN = Array.from({ length: 11 }, (_, exponent) => 10 ** exponent);

/** Reused by `head`. */
let scratch = Buffer.allocUnsafe(1024);

/** Character `character` of id number `id` (value `value`): a space before every id but the first, then its digits. */
function charOf(value: number, id: number, character: number): number {
  const digit = id > 0 ? character - 1 : character;
  if (digit < 0) return SPACE;
  const below = POWERS_OF_TEN[decimalDigitCount(value) - 1 - digit] as number;
  return ZERO + (((value / below) | 0) % 10);
}
