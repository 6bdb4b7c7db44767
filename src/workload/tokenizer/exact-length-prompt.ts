import { ServelabError } from '../../errors/servelab-error.js';
import type { SeededRandom } from '../../utils/random.js';
import type { TextTokenizer } from './text-tokenizer.js';

/** A prompt text and its encoding, which has exactly the asked number of tokens. */
export interface ExactLengthPrompt {
  text: string;
  tokenIds: number[];
}

/** Rounds of decode → encode → adjust before giving up; in practice a prompt settles within a few. */
const MAX_ROUNDS = 200;
/** Consecutive drawn ids that fail the single-token round trip before the vocabulary is declared unusable. */
const MAX_REJECTED_DRAWS = 10_000;

// Control characters other than tab and newline, and the replacement character a stray byte decodes to.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\ufffd]/u;

/** Per tokenizer: whether an id, decoded alone and encoded again, gives back one token (memoized as ids are drawn). */
const roundTripsAlone = new WeakMap<TextTokenizer, Map<number, boolean>>();

/**
 * A text that encodes to exactly `tokenCount` tokens with `tokenizer`, drawn from `random` (the same seed gives the same
 * text). Random ordinary token ids are decoded to text and the text encoded again; decoding and encoding do not
 * always give back the same ids (neighbours merge, pieces split), so the encoding is trimmed when too long and extended
 * with fresh ids when too short, until its length is exact. When trimming alone keeps landing past the target, each
 * further round drops a few more tokens and redraws them, so the rounds cannot cycle; they are bounded all the same.
 */
export function exactLengthPrompt(tokenizer: TextTokenizer, tokenCount: number, random: SeededRandom): ExactLengthPrompt {
  if (!Number.isInteger(tokenCount) || tokenCount < 1) {
    throw new ServelabError('INVALID_CONFIG', `a prompt length must be a whole number of tokens of at least 1, got ${String(tokenCount)}`);
  }
  const draw = idDrawer(tokenizer, random);
  let ids = draw(tokenCount);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const text = tokenizer.decode(ids);
    const encoded = tokenizer.encode(text);
    if (encoded.length === tokenCount) return { text, tokenIds: encoded };
    if (encoded.length < tokenCount) {
      // Drawn tokens tend to merge with their neighbours at about the rate just seen, so draw that many more; landing a
      // little long is cheap to fix (trimming), landing short again costs another round.
      const shortBy = tokenCount - encoded.length;
      const shrink = Math.min(ids.length / Math.max(encoded.length, 1), 2);
      ids = encoded.concat(draw(Math.ceil(shortBy * shrink)));
    } else {
      // Trim to the target; from the fourth round on, also redraw a growing tail so a stubborn boundary changes.
      const redrawn = Math.min(tokenCount, Math.floor(round / 4));
      ids = encoded.slice(0, tokenCount - redrawn).concat(draw(redrawn));
    }
  }
  throw new ServelabError(
    'INVALID_DATASET',
    `tokenizer ${tokenizer.path} gave no text of exactly ${tokenCount} tokens in ${MAX_ROUNDS} rounds of decoding and ` +
      'encoding; use the random-ids dataset for exact token ids, or leave --tokenizer out for word-count prompts',
  );
}

function idDrawer(tokenizer: TextTokenizer, random: SeededRandom): (count: number) => number[] {
  const pool = tokenizer.ordinaryTokenIds;
  if (pool.length === 0) {
    throw new ServelabError('INVALID_DATASET', `tokenizer ${tokenizer.path} has no ordinary tokens to build prompts from`);
  }
  let verdicts = roundTripsAlone.get(tokenizer);
  if (verdicts === undefined) {
    verdicts = new Map();
    roundTripsAlone.set(tokenizer, verdicts);
  }
  const known = verdicts;
  const usable = (id: number): boolean => {
    let verdict = known.get(id);
    if (verdict === undefined) {
      // Ids that cannot stand alone (a stray byte of a multi-byte character, a word-piece suffix) are not drawn, nor
      // control characters, which no real prompt holds.
      const text = tokenizer.decode([id]);
      verdict = text.trim().length > 0 && !CONTROL_CHARACTER.test(text) && tokenizer.encode(text).length === 1;
      known.set(id, verdict);
    }
    return verdict;
  };
  return (count) => {
    const ids = new Array<number>(count);
    for (let index = 0; index < count; index++) {
      let rejected = 0;
      let id = pool[random.integer(0, pool.length - 1)] as number;
      while (!usable(id)) {
        if (++rejected === MAX_REJECTED_DRAWS) {
          throw new ServelabError(
            'INVALID_DATASET',
            `tokenizer ${tokenizer.path}: ${MAX_REJECTED_DRAWS} drawn tokens in a row do not encode back to one token; ` +
              'this tokenizer cannot build exact-length prompts, use the random-ids dataset instead',
          );
        }
        id = pool[random.integer(0, pool.length - 1)] as number;
      }
      ids[index] = id;
    }
    return ids;
  };
}
