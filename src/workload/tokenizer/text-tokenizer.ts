import type { Tokenizer } from '@huggingface/tokenizers';

/**
 * A model's text tokenizer, loaded from its local `tokenizer.json` (see `loadTokenizer`). Counts are of the text's own
 * tokens: special tokens a server adds around a prompt (a beginning-of-text token, say) are not counted, nor drawn.
 */
export class TextTokenizer {
  /** The tokenizer.json it was loaded from. */
  readonly path: string;
  readonly #tokenizer: Tokenizer;
  /** Ids of the vocabulary's ordinary tokens (added and special tokens left out), ascending. */
  readonly ordinaryTokenIds: readonly number[];
  /**
   * Special tokens the tokenizer's post-processor puts around one text (1 for a beginning-of-text token, 2 for BERT's
   * [CLS] … [SEP], 0 for none): what a server that tokenizes with special tokens adds to `countTokens`.
   */
  readonly specialTokensPerText: number;

  constructor(path: string, tokenizer: Tokenizer) {
    this.path = path;
    this.#tokenizer = tokenizer;
    const ids: number[] = [];
    for (const [token, id] of tokenizer.get_vocab(false)) {
      if (typeof token === 'string' && Number.isInteger(id)) ids.push(id);
    }
    this.ordinaryTokenIds = ids.sort((a, b) => a - b);
    this.specialTokensPerText =
      tokenizer.encode('a', { add_special_tokens: true }).ids.length - tokenizer.encode('a', { add_special_tokens: false }).ids.length;
  }

  /** The token ids of `text`, without special tokens. */
  encode(text: string): number[] {
    return this.#tokenizer.encode(text, { add_special_tokens: false }).ids;
  }

  /** The text of `ids`, special tokens left out. */
  decode(ids: readonly number[]): string {
    return this.#tokenizer.decode(ids as number[], { skip_special_tokens: true });
  }

  /** How many tokens `text` encodes to. */
  countTokens(text: string): number {
    return this.encode(text).length;
  }
}
