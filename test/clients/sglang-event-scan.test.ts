import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findMetaInfo, scanMidStreamCompletionTokens } from '../../src/clients/sglang-native/sglang-event-scan.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/streams/', import.meta.url));

describe('scanMidStreamCompletionTokens', () => {
  it('agrees with JSON.parse on every mid-stream event of the recorded SGLang streams, and declines final ones', async () => {
    let scanned = 0;
    for (const file of ['sglang-2026/generate-stream-enable-metrics.sse', 'sglang-2026/generate-stream-plain.sse', 'sglang-2025/generate-stream-enable-metrics-crlf.sse']) {
      const text = await readFile(FIXTURES + file, 'utf8');
      for (const block of text.split(/\r?\n\r?\n/)) {
        if (!block.startsWith('data: {')) continue;
        const data = block.slice(6);
        const meta = (JSON.parse(data) as { meta_info: { finish_reason: unknown; completion_tokens: number } }).meta_info;
        const expected = meta.finish_reason === null ? meta.completion_tokens : -1;
        expect(scanMidStreamCompletionTokens(data), `${file}: ${data.slice(0, 60)}`).toBe(expected);
        scanned++;
      }
    }
    expect(scanned).toBeGreaterThan(25);
  });

  it('is not fooled by key-like text inside the generated text (quotes there are escaped)', () => {
    const generated = JSON.stringify({
      text: 'the answer is {"meta_info":{"finish_reason":null,"completion_tokens":999}}',
      meta_info: { id: 'x', finish_reason: null, completion_tokens: 7 },
    });
    expect(scanMidStreamCompletionTokens(generated)).toBe(7);
  });

  it('declines anything it cannot read for certain, so the caller parses in full', () => {
    expect(scanMidStreamCompletionTokens('{"error":{"message":"boom"}}')).toBe(-1);
    expect(scanMidStreamCompletionTokens('{"text":"x","meta_info":{"finish_reason":null,"completion_tokens":3')).toBe(-1);
    expect(scanMidStreamCompletionTokens('{"meta_info":{"finish_reason":null,"completion_tokens":1.5}}')).toBe(-1);
    expect(scanMidStreamCompletionTokens('{"meta_info":{"finish_reason":null}}')).toBe(-1);
    expect(scanMidStreamCompletionTokens('{"meta_info":{"finish_reason":{"type":"stop"},"completion_tokens":4}}')).toBe(-1);
    expect(scanMidStreamCompletionTokens('[DONE]')).toBe(-1);
  });
});

describe('findMetaInfo', () => {
  it('finds meta_info from the previous event’s hint, and falls back to a full search when the hint misses', () => {
    const event = (text: string, extra: string): string =>
      JSON.stringify({ text, meta_info: { id: 'r', finish_reason: null, completion_tokens: text.length, note: extra } });
    const first = event('a', '');
    const firstStart = findMetaInfo(first, undefined);
    expect(firstStart).toBe(first.indexOf('"meta_info":'));
    const tail = first.length - firstStart;
    // The text grew: the hint still lands before meta_info.
    const second = event('a'.repeat(500), '');
    expect(findMetaInfo(second, tail)).toBe(second.indexOf('"meta_info":'));
    // meta_info grew far past the slack: the hinted search misses and the full search finds it.
    const third = event('a'.repeat(600), 'x'.repeat(1000));
    expect(findMetaInfo(third, tail)).toBe(third.indexOf('"meta_info":'));
    expect(findMetaInfo('{"text":"no meta here"}', tail)).toBe(-1);
  });

  it('checks the remembered key positions first and searches again when the layout moved', () => {
    const event = (id: string, tokens: number): string => JSON.stringify({ text: 'x', meta_info: { id, finish_reason: null, completion_tokens: tokens } });
    const remembered = { finishReason: -1, completionTokens: -1 };
    expect(scanMidStreamCompletionTokens(event('a', 1), 0, remembered)).toBe(1);
    const firstPositions = { ...remembered };
    expect(firstPositions.completionTokens).toBeGreaterThan(firstPositions.finishReason);
    expect(scanMidStreamCompletionTokens(event('a', 2), 0, remembered)).toBe(2);
    expect(remembered).toEqual(firstPositions);
    // A longer id moves both keys: the remembered positions miss, the search finds them and remembers the new ones.
    expect(scanMidStreamCompletionTokens(event('a-much-longer-id', 3), 0, remembered)).toBe(3);
    expect(remembered.finishReason).toBeGreaterThan(firstPositions.finishReason);
    expect(scanMidStreamCompletionTokens(event('a-much-longer-id', 4), 0, remembered)).toBe(4);
  });

  it('gives the same counts when the scan starts at meta_info as from the start, on every recorded event', async () => {
    let compared = 0;
    for (const file of ['sglang-2026/generate-stream-enable-metrics.sse', 'sglang-2026/generate-stream-plain.sse', 'sglang-2025/generate-stream-enable-metrics-crlf.sse']) {
      const text = await readFile(FIXTURES + file, 'utf8');
      let tail: number | undefined;
      const remembered = { finishReason: -1, completionTokens: -1 };
      for (const block of text.split(/\r?\n\r?\n/)) {
        if (!block.startsWith('data: {')) continue;
        const data = block.slice(6);
        const start = findMetaInfo(data, tail);
        expect(start).toBeGreaterThan(0);
        tail = data.length - start;
        expect(scanMidStreamCompletionTokens(data, start)).toBe(scanMidStreamCompletionTokens(data));
        expect(scanMidStreamCompletionTokens(data, start, remembered)).toBe(scanMidStreamCompletionTokens(data));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(25);
  });
});
