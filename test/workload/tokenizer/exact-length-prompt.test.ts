import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../src/utils/random.js';
import { exactLengthPrompt } from '../../../src/workload/tokenizer/exact-length-prompt.js';
import { loadTokenizer } from '../../../src/workload/tokenizer/load-tokenizer.js';

const fixtures = join(import.meta.dirname, '../../fixtures/tokenizers');
const tokenizerPaths = {
  'byte-level BPE': join(fixtures, 'byte-level-bpe/tokenizer.json'),
  WordPiece: join(fixtures, 'wordpiece/tokenizer.json'),
};

describe.each(Object.entries(tokenizerPaths))('exactLengthPrompt with a %s tokenizer', (_name, path) => {
  it('gives a text of exactly N tokens for every N from 1 to 150', async () => {
    const tokenizer = await loadTokenizer(path);
    const random = new SeededRandom(7);
    for (let tokenCount = 1; tokenCount <= 150; tokenCount++) {
      const prompt = exactLengthPrompt(tokenizer, tokenCount, random);
      expect(prompt.tokenIds).toHaveLength(tokenCount);
      expect(tokenizer.encode(prompt.text)).toEqual(prompt.tokenIds);
    }
  });

  it('gives exact lengths for long prompts too', async () => {
    const tokenizer = await loadTokenizer(path);
    const random = new SeededRandom(8);
    for (const tokenCount of [1000, 4096, 10_000]) {
      expect(tokenizer.countTokens(exactLengthPrompt(tokenizer, tokenCount, random).text)).toBe(tokenCount);
    }
  });

  it('is reproducible from the seed, and different seeds give different texts', async () => {
    const tokenizer = await loadTokenizer(path);
    const texts = (seed: number): string[] => {
      const random = new SeededRandom(seed);
      return [1, 5, 64, 300].map((tokenCount) => exactLengthPrompt(tokenizer, tokenCount, random).text);
    };
    expect(texts(11)).toEqual(texts(11));
    expect(texts(12)).not.toEqual(texts(11));
  });

  it('builds text from ordinary tokens: no special tokens, no control characters', async () => {
    const tokenizer = await loadTokenizer(path);
    const text = exactLengthPrompt(tokenizer, 2000, new SeededRandom(3)).text;
    // eslint-disable-next-line no-control-regex
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\ufffd]/u);
    expect(text).not.toMatch(/\[CLS\]|\[SEP\]|\[UNK\]|<\|begin_of_text\|>|<\|end_of_text\|>/);
    const ordinary = new Set(tokenizer.ordinaryTokenIds);
    expect(tokenizer.encode(text).every((id) => ordinary.has(id))).toBe(true);
  });
});

describe('exactLengthPrompt errors', () => {
  it('refuses a length that is not a whole number of at least 1', async () => {
    const tokenizer = await loadTokenizer(tokenizerPaths.WordPiece);
    for (const tokenCount of [0, -3, 2.5, Number.NaN]) {
      expect(() => exactLengthPrompt(tokenizer, tokenCount, new SeededRandom(1))).toThrow(
        expect.objectContaining({ code: 'INVALID_CONFIG' }) as Error,
      );
    }
  });

  it('names the tokenizer when its vocabulary has nothing but special tokens', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'servelab-tokenizer-'));
    const path = join(directory, 'tokenizer.json');
    writeFileSync(
      path,
      JSON.stringify({
        added_tokens: [{ id: 0, content: '[UNK]', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
        normalizer: null,
        pre_tokenizer: { type: 'WhitespaceSplit' },
        post_processor: null,
        decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
        model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: { '[UNK]': 0 } },
      }),
    );
    const tokenizer = await loadTokenizer(path);
    expect(() => exactLengthPrompt(tokenizer, 4, new SeededRandom(1))).toThrow(
      expect.objectContaining({ code: 'INVALID_DATASET', message: expect.stringContaining(path) as string }) as Error,
    );
  });
});
