import { describe, expect, it } from 'vitest';
import type { ProtocolName } from '../../src/clients/registry.js';
import { hostile, sendOne, sse } from './helpers/hostile-server.js';
import type { ClientRequest, ProtocolClientOptions } from '../../src/types/client.js';
import type { ClientOutcome } from '../../src/types/record.js';

/**
 * Hostile servers (issue 11): answers that used to crash or stall the client. Each must end as an outcome with an
 * error class; none may allocate what the server claims. The servers are plain node:http on loopback port 0, written
 * for these tests (no fixture: the shapes are the protocols' own, with impossible values).
 */

const REQUEST: ClientRequest = {
  requestId: 'hostile-1',
  workload: { datasetIndex: 0, prompt: 'one two three four', inputLength: 4, outputLength: 16 },
};

const send = (protocol: ProtocolName, url: string, options: Partial<ProtocolClientOptions> = {}): Promise<ClientOutcome> =>
  sendOne(protocol, url, REQUEST, options);

const sglangEvent = (completionTokens: number, finish: string | null = null): Record<string, unknown> => ({
  text: 'x',
  meta_info: { id: 'r', prompt_tokens: 4, completion_tokens: completionTokens, finish_reason: finish === null ? null : { type: finish } },
});

const openAiChunk = (content: string, usage?: Record<string, number>, finish: string | null = null): Record<string, unknown> => ({
  id: 'c',
  object: 'text_completion',
  choices: [{ index: 0, text: content, finish_reason: finish }],
  ...(usage === undefined ? {} : { usage }),
});

describe('token counts a server cannot have sent honestly', () => {
  it('sglang: one event claiming 300,000,000 tokens is malformed_stream, and no gap is stored for it', async () => {
    const url = await hostile((_request, response) => sse(response, [sglangEvent(1), sglangEvent(300_000_000), sglangEvent(300_000_001, 'length'), '[DONE]']));
    const outcome = await send('sglang', url);
    expect(outcome.success).toBe(false);
    expect(outcome.error).toBe('malformed_stream');
    expect(outcome.errorMessage).toContain('beyond the 16 tokens the request allows');
    expect(outcome.interTokenLatencies?.length ?? 0).toBeLessThanOrEqual(16);
    expect(outcome.actualOutputTokens).toBeUndefined();
  });

  it('openai: one chunk claiming 300,000,000 tokens in its usage is malformed_stream', async () => {
    const url = await hostile((_request, response) =>
      sse(response, [openAiChunk('a', { completion_tokens: 1 }), openAiChunk('b', { completion_tokens: 300_000_000 }), '[DONE]']),
    );
    const outcome = await send('openai-completions', url);
    expect(outcome.error).toBe('malformed_stream');
    expect(outcome.interTokenLatencies?.length ?? 0).toBeLessThanOrEqual(16);
  });

  it('sglang: 1e15 in the final event is malformed_stream', async () => {
    const url = await hostile((_request, response) => sse(response, [sglangEvent(1), sglangEvent(1e15, 'length'), '[DONE]']));
    const outcome = await send('sglang', url);
    expect(outcome.error).toBe('malformed_stream');
    expect(outcome.actualOutputTokens).toBeUndefined();
  });

  it('openai: 1e15 in the final usage chunk is malformed_stream, and the count is not stored', async () => {
    const url = await hostile((_request, response) =>
      sse(response, [openAiChunk('a'), openAiChunk('b', undefined, 'length'), { id: 'c', choices: [], usage: { prompt_tokens: 4, completion_tokens: 1e15 } }, '[DONE]']),
    );
    const outcome = await send('openai-completions', url);
    expect(outcome.error).toBe('malformed_stream');
    expect(outcome.actualOutputTokens).toBeUndefined();
  });

  it('sglang non-streamed: 1e15 completion tokens in the body is malformed_stream', async () => {
    const url = await hostile((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(sglangEvent(1e15, 'length')));
    });
    const outcome = await send('sglang', url, { stream: false });
    expect(outcome.error).toBe('malformed_stream');
  });

  // A count that goes backwards used to fail the whole request as malformed_stream, losing its honest timing: now the
  // count alone is screened (left empty, counted in data_quality) and the request's own times stand.
  it('sglang: a count that goes backwards is screened, not a failure: the count is left empty, the timing kept', async () => {
    const url = await hostile((_request, response) => sse(response, [sglangEvent(3), sglangEvent(2), sglangEvent(4, 'length'), '[DONE]']));
    const outcome = await send('sglang', url);
    expect(outcome.success).toBe(true);
    expect(outcome.error).toBeUndefined();
    expect(outcome.actualOutputTokens).toBeUndefined();
    expect(outcome.dataQuality).toBe('actualOutputTokens:backward_count');
    expect(outcome.firstTokenTime).toBeDefined();
    expect(outcome.finishTime).toBeDefined();
    // Counting went on from the highest count (3): the last event added one token, one gap; the backward one none.
    expect(outcome.interTokenLatencies).toHaveLength(1);
  });

  it('openai: a usage count that goes backwards is screened the same way', async () => {
    const url = await hostile((_request, response) =>
      sse(response, [openAiChunk('a', { completion_tokens: 3 }), openAiChunk('b', { completion_tokens: 1 }), openAiChunk('c', { completion_tokens: 5 }, 'length'), '[DONE]']),
    );
    const outcome = await send('openai-completions', url);
    expect(outcome.success).toBe(true);
    expect(outcome.actualOutputTokens).toBeUndefined();
    expect(outcome.dataQuality).toBe('actualOutputTokens:backward_count');
    expect(outcome.interTokenLatencies).toHaveLength(2);
  });

  it('an honest stream that reaches exactly the limit still succeeds', async () => {
    const url = await hostile((_request, response) => sse(response, [sglangEvent(1), sglangEvent(8), sglangEvent(16, 'length'), '[DONE]']));
    const outcome = await send('sglang', url);
    expect(outcome.success).toBe(true);
    expect(outcome.actualOutputTokens).toBe(16);
    expect(outcome.interTokenLatencies).toHaveLength(15);
  });
});

describe('bodies and events beyond the size caps', () => {
  it('a 600 MB non-streamed body, streamed in chunks, fails as malformed_stream at the 128 MiB default cap', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 0x61); // 'a'; written again and again, never allocated whole
    const totalBytes = 600 * 1024 * 1024;
    let written = 0;
    const url = await hostile((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(totalBytes) });
      const pump = (): void => {
        while (written < totalBytes && !response.destroyed) {
          written += chunk.length;
          if (!response.write(chunk)) {
            response.once('drain', pump);
            return;
          }
        }
        if (!response.destroyed) response.end();
      };
      response.on('close', () => undefined);
      pump();
    });
    const outcome = await send('sglang', url, { stream: false });
    expect(outcome.error).toBe('malformed_stream');
    expect(outcome.errorMessage).toContain('cap of 134217728 bytes');
    // The client stopped reading at the cap: the server could not push the rest (loopback buffers hold a few MB).
    expect(written).toBeLessThan(200 * 1024 * 1024);
  });

  it('a streamed event past maxSseEventBytes fails as malformed_stream', async () => {
    const url = await hostile((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(`data: ${JSON.stringify(sglangEvent(1))}\n\n`);
      response.write(`data: ${'x'.repeat(10 * 1024 * 1024)}\n\n`);
      response.end();
    });
    const outcome = await send('sglang', url, { limits: { maxSseEventBytes: 1024 * 1024 } });
    expect(outcome.error).toBe('malformed_stream');
    expect(outcome.errorMessage).toContain('maxSseEventBytes');
  });

  it('a 10 MB SSE line within the default cap is read whole (the parser is linear: see sse-parser.test.ts)', async () => {
    const text = 'y'.repeat(10 * 1024 * 1024);
    const url = await hostile((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const line = `data: ${JSON.stringify({ text, meta_info: { id: 'r', completion_tokens: 1, finish_reason: { type: 'length' } } })}\n\n`;
      // In 64 KiB writes, as a server would flush a long event.
      for (let start = 0; start < line.length; start += 65_536) response.write(line.slice(start, start + 65_536));
      response.end('data: [DONE]\n\n');
    });
    const outcome = await send('sglang', url);
    expect(outcome.success).toBe(true);
    expect(outcome.actualOutputTokens).toBe(1);
  });
});

describe('stalls', () => {
  it('headers then silence ends as idle_timeout under the (overridden, short) idle deadline', async () => {
    const url = await hostile((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.flushHeaders();
    });
    const outcome = await send('sglang', url, { timeouts: { idleMs: 50, totalMs: 5000 } });
    expect(outcome.error).toBe('idle_timeout');
  });

  it('no headers at all ends as first_byte_timeout', async () => {
    const url = await hostile(() => undefined);
    const outcome = await send('openai-chat', url, { timeouts: { firstByteMs: 50 } });
    expect(outcome.error).toBe('first_byte_timeout');
  });
});
