import { ServelabError } from '../../errors/servelab-error.js';
import type { SeededRandom } from '../../utils/random.js';
import { COMMON_WORDS } from '../../utils/word-tokenizer.js';

/** Rejects a setting that is not a whole number of at least `minimum`, naming the setting and its flag. */
export function requireWholeNumber(name: string, value: number | undefined, minimum: number): number {
  if (value === undefined || !Number.isInteger(value) || value < minimum) {
    throw new ServelabError(
      'INVALID_CONFIG',
      `${name} must be a whole number of at least ${minimum}, got ${String(value)}`,
    );
  }
  return value;
}

/** Rejects a ratio outside [0, 1]. */
export function requireRatio(name: string, value: number): number {
  if (!(value >= 0 && value <= 1)) {
    throw new ServelabError('INVALID_CONFIG', `${name} must lie between 0 and 1, got ${String(value)}`);
  }
  return value;
}

/**
 * A length uniform over the integers [max(floor(fullLength × ratio), 1), fullLength]: SGLang bench_serving's rule for
 * random lengths (its `compute_random_lens`), lower bound of one token included.
 */
export function randomLength(fullLength: number, ratio: number, random: SeededRandom): number {
  const lowest = Math.max(Math.floor(fullLength * ratio), 1);
  return random.integer(lowest, fullLength);
}

/** Text of exactly `wordCount` words from a list of common words: `wordCount` tokens for the word tokenizer. */
export function randomWords(wordCount: number, random: SeededRandom): string {
  const words = new Array<string>(wordCount);
  for (let index = 0; index < wordCount; index++) {
    words[index] = COMMON_WORDS[random.integer(0, COMMON_WORDS.length - 1)] as string;
  }
  return words.join(' ');
}
