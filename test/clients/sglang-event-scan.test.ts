import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { scanMidStreamCompletionTokens } from '../../src/clients/sglang-native/sglang-event-scan.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/streams/sglang/', import.meta.url));

describe('scanMidStreamCompletionTokens', () => {
  it('agrees with JSON.parse on every mid-stream event of the recorded SGLang streams, and declines final ones', async () => {
    let scanned = 0;
    for (const file of ['generate-stream-enable-metrics.sse', 'generate-stream-plain.sse', 'generate-stream-legacy-crlf.sse']) {
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
