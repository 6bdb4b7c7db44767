/**
 * The simulated engine's tokenizer: one token per whitespace-separated word, the word's id a stable hash.
 *
 * Real tokenizers need vocabulary files that are not shipped here; the simulator only needs a tokenizer that is
 * deterministic (so identical prefixes map to identical ids and hit the prefix cache) and that agrees with the
 * `random` dataset, which builds prompts of N words to mean N tokens.
 */
export const WORD_TOKENIZER_VOCAB_SIZE = 128_000;

/** Token ids as a packed Int32Array: prompts can be held by the prefix cache for a long time, so they are kept small. */
export function wordTokenIds(text: string): Int32Array {
  const ids = new Int32Array(countWordTokens(text));
  let count = 0;
  let start = -1;
  for (let index = 0; index <= text.length; index++) {
    const code = index < text.length ? text.charCodeAt(index) : 32;
    const isSpace = code === 32 || code === 10 || code === 9 || code === 13;
    if (!isSpace && start < 0) start = index;
    else if (isSpace && start >= 0) {
      ids[count++] = hashWord(text, start, index);
      start = -1;
    }
  }
  return ids;
}

export function countWordTokens(text: string): number {
  let count = 0;
  let inWord = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    const isSpace = code === 32 || code === 10 || code === 9 || code === 13;
    if (!isSpace && !inWord) count++;
    inWord = !isSpace;
  }
  return count;
}

/** FNV-1a over the word's UTF-16 code units, folded into the vocabulary. */
function hashWord(text: string, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let index = start; index < end; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % WORD_TOKENIZER_VOCAB_SIZE;
}

/** A fixed list of short common words; generated text draws from it so a word is one token for most real tokenizers. */
export const COMMON_WORDS: readonly string[] = (
  'the of and to in is for on that with as by at from it be this are was an or not have has which but can will all ' +
  'one two new more time some were out about would there their what up when so if no into than other only its may ' +
  'also two like over just any use most these how then our first well way even back after many much where those ' +
  'model data test node load rate queue batch token cache route server client value point line part case group ' +
  'state order level power light water field world house table plan sound voice paper story music river stone'
)
  .split(' ')
  .filter((word) => word.length > 0);
