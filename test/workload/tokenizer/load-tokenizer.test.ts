import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ServelabError } from '../../../src/errors/servelab-error.js';
import { loadTokenizer } from '../../../src/workload/tokenizer/load-tokenizer.js';

const fixtures = join(import.meta.dirname, '../../fixtures/tokenizers');
const bpePath = join(fixtures, 'byte-level-bpe/tokenizer.json');
const wordPiecePath = join(fixtures, 'wordpiece/tokenizer.json');

async function loadError(path: string): Promise<ServelabError> {
  const error: unknown = await loadTokenizer(path).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ServelabError);
  return error as ServelabError;
}

describe('loadTokenizer', () => {
  it('loads a byte-level BPE tokenizer.json: encode and decode round-trip, special tokens are neither counted nor drawn', async () => {
    const tokenizer = await loadTokenizer(bpePath);
    const text = 'The scheduler decides which requests run.';
    const ids = tokenizer.encode(text);
    expect(ids).toHaveLength(7); // The, Ġscheduler, Ġdecides, Ġwhich, Ġrequests, Ġrun, .
    expect(tokenizer.countTokens(text)).toBe(7);
    expect(tokenizer.decode(ids)).toBe(text);
    // Text the merges never saw falls apart into smaller pieces, down to single bytes.
    expect(tokenizer.countTokens('zyxw')).toBe(4);
    const special = JSON.parse(readFileSync(bpePath, 'utf8')) as { added_tokens: { id: number }[] };
    for (const { id } of special.added_tokens) {
      expect(ids).not.toContain(id);
      expect(tokenizer.ordinaryTokenIds).not.toContain(id);
    }
    expect(tokenizer.ordinaryTokenIds.length).toBe(638 - special.added_tokens.length);
    expect(tokenizer.specialTokensPerText).toBe(1); // <|begin_of_text|>
  });

  it('loads a WordPiece tokenizer.json with its normalizer (lowercase) and sub-word pieces', async () => {
    const tokenizer = await loadTokenizer(wordPiecePath);
    expect(tokenizer.countTokens('The Cache')).toBe(2);
    expect(tokenizer.countTokens('caches')).toBe(2); // cache ##s
    expect(tokenizer.decode(tokenizer.encode('The Cache keeps prompts.'))).toBe('the cache keeps prompts.');
    expect(tokenizer.ordinaryTokenIds).not.toContain(tokenizer.encode('[CLS]')[0]);
    expect(tokenizer.specialTokensPerText).toBe(2); // [CLS] … [SEP]
  });

  it('reads the tokenizer_config.json beside the tokenizer.json', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'servelab-tokenizer-'));
    const path = join(directory, 'tokenizer.json');
    writeFileSync(path, readFileSync(bpePath));
    const ids = (await loadTokenizer(path)).encode('run .');
    expect((await loadTokenizer(path)).decode(ids)).toBe('run.'); // tokenizers.js cleans up spaces before punctuation by default
    writeFileSync(join(directory, 'tokenizer_config.json'), JSON.stringify({ clean_up_tokenization_spaces: false }));
    writeFileSync(path, `${readFileSync(bpePath, 'utf8')} `); // a changed file is loaded again
    expect((await loadTokenizer(path)).decode(ids)).toBe('run .');
  });

  it('returns the same tokenizer for the same unchanged file', async () => {
    expect(await loadTokenizer(bpePath)).toBe(await loadTokenizer(bpePath));
  });

  it('names the missing file and the fix', async () => {
    const error = await loadError('/nonexistent/model/tokenizer.json');
    expect(error.code).toBe('FILE_NOT_FOUND');
    expect(error.message).toContain('/nonexistent/model/tokenizer.json');
    expect(error.message).toContain('--tokenizer');
    expect(error.message).toContain('never downloads');
  });

  it('refuses a directory, a file that is not JSON, JSON that is not a tokenizer, and a broken tokenizer_config.json', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'servelab-tokenizer-'));
    const directoryError = await loadError(directory);
    expect(directoryError.code).toBe('INVALID_DATASET');
    expect(directoryError.message).toMatch(/is a directory.*tokenizer\.json/);

    const notJson = join(directory, 'not-json.json');
    writeFileSync(notJson, '{"model": ');
    const notJsonError = await loadError(notJson);
    expect(notJsonError.code).toBe('INVALID_DATASET');
    expect(notJsonError.message).toContain(`${notJson} is not valid JSON`);

    const notTokenizer = join(directory, 'config.json');
    writeFileSync(notTokenizer, JSON.stringify({ architectures: ['LlamaForCausalLM'] }));
    const notTokenizerError = await loadError(notTokenizer);
    expect(notTokenizerError.code).toBe('INVALID_DATASET');
    expect(notTokenizerError.message).toContain(`${notTokenizer} is not a tokenizer.json`);

    const unknownModel = join(directory, 'unknown-model.json');
    writeFileSync(unknownModel, JSON.stringify({ model: { type: 'NoSuchModel', vocab: {} } }));
    const unknownModelError = await loadError(unknownModel);
    expect(unknownModelError.code).toBe('INVALID_DATASET');
    expect(unknownModelError.message).toContain(unknownModel);

    const withBrokenConfig = join(directory, 'with-config');
    mkdirSync(withBrokenConfig);
    writeFileSync(join(withBrokenConfig, 'tokenizer.json'), readFileSync(bpePath));
    writeFileSync(join(withBrokenConfig, 'tokenizer_config.json'), '{');
    const configError = await loadError(join(withBrokenConfig, 'tokenizer.json'));
    expect(configError.code).toBe('INVALID_DATASET');
    expect(configError.message).toContain(join(withBrokenConfig, 'tokenizer_config.json'));
  });
});
