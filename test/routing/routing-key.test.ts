import { describe, expect, it } from 'vitest';
import { requestIdFromBody, routingKeyFromBody, routingKeyFromTokenIds } from '../../src/routing/routing-key.js';

describe('routing key', () => {
  // Expected keys as smg's extract_text_for_routing gives them (crates/protocols: generate.rs, completion.rs,
  // chat.rs; lightseekorg/smg as of 2026-08-07).
  it('takes /generate text, else the input_ids joined by spaces (a batch flattened)', () => {
    expect(routingKeyFromBody({ text: 'hello', input_ids: [1] })).toBe('hello');
    expect(routingKeyFromBody({ input_ids: [1, 2, 3] })).toBe('1 2 3');
    expect(routingKeyFromBody({ input_ids: [[1, 2], [3]] })).toBe('1 2 3');
  });

  it('takes an OpenAI completions prompt, an array of them joined by spaces', () => {
    expect(routingKeyFromBody({ prompt: 'p' })).toBe('p');
    expect(routingKeyFromBody({ prompt: ['ab', 'cd'] })).toBe('ab cd');
    expect(routingKeyFromBody({ prompt: [5, 6] })).toBe('5 6');
  });

  it('takes the chat messages\' texts joined by spaces, an assistant\'s reasoning after its answer', () => {
    expect(
      routingKeyFromBody({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'image_url', image_url: { url: 'x' } }, { type: 'text', text: 'there' }] },
          { role: 'assistant', content: 'Hello.', reasoning_content: 'greet back' },
          { role: 'user', content: '' },
          { role: 'user', content: 'Bye' },
        ],
      }),
    ).toBe('Be brief. Hi there Hello. greet back Bye');
  });

  it('gives an empty key for anything else', () => {
    expect(routingKeyFromBody(null)).toBe('');
    expect(routingKeyFromBody('text')).toBe('');
    expect(routingKeyFromBody({ sampling_params: {} })).toBe('');
  });

  it('reads rid, the first one of a batch', () => {
    expect(requestIdFromBody({ rid: 'a' })).toBe('a');
    expect(requestIdFromBody({ rid: ['b', 'c'] })).toBe('b');
    expect(requestIdFromBody({ rid: 7 })).toBeUndefined();
  });

  it('gives the key of an input_ids body straight from the ids, whatever array holds them', () => {
    const ids = [0, 7, 31_999, 65_535, 128_255, 4_000_000_000];
    for (const held of [ids, Uint16Array.from(ids.filter((id) => id < 65_536)), Uint32Array.from(ids)]) {
      expect(routingKeyFromTokenIds(held)).toBe(routingKeyFromBody({ input_ids: Array.from(held) }));
    }
    expect(routingKeyFromTokenIds([])).toBe('');
  });

  it('gives join\'s key for any ids, long prompts and odd numbers included', () => {
    for (const ids of [[1, 2.5, 3], [-1, 4], [2 ** 32, 0], [Number.NaN], [2 ** 53, -0, 1e21]]) expect(routingKeyFromTokenIds(ids)).toBe(ids.join(' '));
    const long = Uint32Array.from({ length: 5000 }, (_, index) => (index * 2_654_435_761) % 4_294_967_296);
    expect(routingKeyFromTokenIds(long)).toBe(Array.from(long).join(' '));
    expect(routingKeyFromTokenIds([9, 10, 99, 100, 999_999_999, 1_000_000_000, 4_294_967_295])).toBe('9 10 99 100 999999999 1000000000 4294967295');
  });
});
