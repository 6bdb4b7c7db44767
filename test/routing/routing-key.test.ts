import { describe, expect, it } from 'vitest';
import { requestIdFromBody, routingKeyFromBody, routingKeyFromTokenIds } from '../../src/routing/routing-key.js';

describe('routing key', () => {
  it('takes /generate text, a batch joined, or the stringified input_ids', () => {
    expect(routingKeyFromBody({ text: 'hello', input_ids: [1] })).toBe('hello');
    expect(routingKeyFromBody({ text: ['ab', 'cd'] })).toBe('abcd');
    expect(routingKeyFromBody({ input_ids: [1, 2, 3] })).toBe('[1,2,3]');
  });

  it('takes an OpenAI completions prompt and chat message contents in order', () => {
    expect(routingKeyFromBody({ prompt: 'p' })).toBe('p');
    expect(routingKeyFromBody({ prompt: [5, 6] })).toBe('[5,6]');
    expect(
      routingKeyFromBody({
        messages: [
          { role: 'system', content: 'Be brief. ' },
          { role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'image_url', image_url: { url: 'x' } }] },
        ],
      }),
    ).toBe('Be brief. Hi');
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
    expect(routingKeyFromTokenIds([])).toBe(JSON.stringify([]));
  });

  it('gives join\'s key for ids that are not whole numbers below 2^32, and the same key for long prompts', () => {
    for (const ids of [[1, 2.5, 3], [-1, 4], [2 ** 32, 0], [Number.NaN]]) expect(routingKeyFromTokenIds(ids)).toBe(`[${ids.join(',')}]`);
    const long = Uint32Array.from({ length: 5000 }, (_, index) => (index * 2_654_435_761) % 4_294_967_296);
    expect(routingKeyFromTokenIds(long)).toBe(JSON.stringify(Array.from(long)));
    expect(routingKeyFromTokenIds([9, 10, 99, 100, 999_999_999, 1_000_000_000, 4_294_967_295])).toBe('[9,10,99,100,999999999,1000000000,4294967295]');
  });
});
