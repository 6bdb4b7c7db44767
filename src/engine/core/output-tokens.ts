import { COMMON_WORDS, wordTokenIds } from '../../utils/word-tokenizer.js';

/**
 * Generated tokens are drawn from the common-word list, so the text the engine sends back re-tokenizes (with the word
 * tokenizer) to the very ids it generated: a multi-turn client that sends the answer back hits the prefix cache, as it
 * would on a real server. The choice is a pure hash of (seed, request serial, index): nothing is stored per token.
 */
export const OUTPUT_WORDS: readonly string[] = COMMON_WORDS;

export const OUTPUT_WORD_TOKEN_IDS: Int32Array = Int32Array.from(OUTPUT_WORDS, (word) => wordTokenIds(word)[0] ?? 0);

export function outputWordIndex(seed: number, serial: number, index: number): number {
  let hash = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(serial + 1, 0xc2b2ae35) ^ Math.imul(index + 1, 0x27d4eb2f);
  hash ^= hash >>> 15;
  hash = Math.imul(hash, 0x2c1b3c6d);
  hash ^= hash >>> 12;
  return (hash >>> 0) % OUTPUT_WORDS.length;
}

export function outputTokenId(seed: number, serial: number, index: number): number {
  return OUTPUT_WORD_TOKEN_IDS[outputWordIndex(seed, serial, index)] as number;
}
