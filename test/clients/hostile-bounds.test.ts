import type { ServerResponse } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import type { ProtocolName } from '../../src/clients/registry.js';
import { createProtocolClient } from '../../src/clients/registry.js';
import { systemClock } from '../../src/clock/clock.js';
import { hostile, sendOne, sse } from './helpers/hostile-server.js';
import { MAX_ERROR_MESSAGE_CHARS, MAX_FINISH_REASON_CHARS } from '../../src/clients/common/response-decoder.js';
import type { ClientRequest, ProtocolClientOptions } from '../../src/types/client.js';
import type { ClientOutcome } from '../../src/types/record.js';

/**
 * Hostile servers (issue 29): answers that made the client hold unbounded server text, or kept a request alive without
 * progress. Each server is plain node:http on loopback port 0; sizes are scaled down from the reports (megabytes, not
 * the 30 MB x 160 that took a run to 9 GB): what is checked is that a cap holds, not how much memory breaks it.
 */

const REQUEST: ClientRequest = {
  requestId: 'bounds-1',
  workload: { datasetIndex: 0, prompt: 'one two three four', inputLength: 4, outputLength: 16 },
};

const send = (protocol: ProtocolName, url: string, options: Partial<ProtocolClientOptions> = {}): Promise<ClientOutcome> =>
  sendOne(protocol, url, REQUEST, options);

/** A megabyte of text where a one-word finish_reason belongs. */
const HUGE_REASON = 'x'.repeat(1024 * 1024);

describe('server text is capped where a record stores it', () => {
  it('sglang: a 1 MB finish_reason.type is stored cut to the cap', async () => {
    const url = await hostile((_request, response) =>
      sse(response, [{ text: 'a', meta_info: { id: 'r', prompt_tokens: 4, completion_tokens: 1, finish_reason: { type: HUGE_REASON } } }]),
    );
    const outcome = await send('sglang', url);
    expect(outcome.success).toBe(true);
    expect(outcome.finishReason).toBe('x'.repeat(MAX_FINISH_REASON_CHARS));
  });

  it('sglang non-streamed: a 1 MB finish_reason string is stored cut to the cap', async () => {
    const url = await hostile((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ text: 'a', meta_info: { id: 'r', prompt_tokens: 4, completion_tokens: 1, finish_reason: HUGE_REASON } }));
    });
    const outcome = await send('sglang', url, { stream: false });
    expect(outcome.finishReason?.length).toBe(MAX_FINISH_REASON_CHARS);
  });

  it('openai streamed and non-streamed: a 1 MB choices[0].finish_reason is stored cut to the cap', async () => {
    const chunk = { id: 'c', object: 'text_completion', choices: [{ index: 0, text: 'a', finish_reason: HUGE_REASON }] };
    const streamed = await hostile((_request, response) => sse(response, [chunk, '[DONE]']));
    const whole = await hostile((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(chunk));
    });
    expect((await send('openai-completions', streamed)).finishReason?.length).toBe(MAX_FINISH_REASON_CHARS);
    expect((await send('openai-completions', whole, { stream: false })).finishReason?.length).toBe(MAX_FINISH_REASON_CHARS);
  });

  it('an abort event with a 1 MB message keeps at most the error message cap', async () => {
    const url = await hostile((_request, response) =>
      sse(response, [{ text: '', meta_info: { id: 'r', completion_tokens: 0, finish_reason: { type: 'abort', message: HUGE_REASON, status_code: 400 } } }]),
    );
    const outcome = await send('sglang', url);
    expect(outcome.error).toBe('server_error');
    expect(outcome.errorMessage?.length).toBe(MAX_ERROR_MESSAGE_CHARS);
  });
});

/** Writes `piece` every `everyMs` until the client goes away (or 10 s pass: the test has failed by then). */
function dripForever(response: ServerResponse, piece: string, everyMs: number): void {
  const timer = setInterval(() => {
    if (response.destroyed) clearInterval(timer);
    else response.write(piece);
  }, everyMs);
  setTimeout(() => clearInterval(timer), 10_000).unref();
  response.on('close', () => clearInterval(timer));
}

describe('deadlines count progress, not bytes', () => {
  it('SSE keep-alive comments do not keep the idle deadline alive', async () => {
    const url = await hostile((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      dripForever(response, ': keep-alive\n\n', 20);
    });
    const outcome = await send('sglang', url, { timeouts: { idleMs: 200, totalMs: 8000 } });
    expect(outcome.error).toBe('idle_timeout');
  });

  it('a drip of bytes inside one event is not progress', async () => {
    const url = await hostile((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: {"text": "');
      dripForever(response, 'a', 20);
    });
    const outcome = await send('openai-completions', url, { timeouts: { idleMs: 200, totalMs: 8000 } });
    expect(outcome.error).toBe('idle_timeout');
  });

  it('events that do arrive keep a slow stream alive past the idle deadline', async () => {
    const url = await hostile((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      let count = 0;
      const timer = setInterval(() => {
        count++;
        const last = count === 12;
        response.write(`data: ${JSON.stringify({ text: 'a', meta_info: { id: 'r', completion_tokens: count, finish_reason: last ? { type: 'length' } : null } })}\n\n`);
        if (last) {
          clearInterval(timer);
          response.end();
        }
      }, 150);
    });
    const outcome = await send('sglang', url, { timeouts: { idleMs: 1000, totalMs: 8000 } });
    expect(outcome.success).toBe(true);
    expect(outcome.actualOutputTokens).toBe(12);
  });
});

describe('an error status stops reading its body', () => {
  it('an HTTP 500 whose body never ends is http_5xx with the body so far, not a wait for the total deadline', async () => {
    const url = await hostile((_request, response) => {
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.write('engine overloaded');
      dripForever(response, '.', 50);
    });
    const outcome = await send('sglang', url, { timeouts: { idleMs: 600_000, totalMs: 8000 } });
    expect(outcome.error).toBe('http_5xx');
    expect(outcome.httpStatus).toBe(500);
    expect(outcome.errorMessage).toMatch(/^HTTP 500: engine overloaded/);
  });

  it('an HTTP 503 with an endless fast body is cut at the error-body cap', async () => {
    const url = await hostile((_request, response) => {
      response.writeHead(503, { 'content-type': 'text/plain' });
      dripForever(response, 'x'.repeat(64 * 1024), 1);
    });
    const outcome = await send('openai-chat', url, { timeouts: { idleMs: 600_000, totalMs: 8000 } });
    expect(outcome.error).toBe('http_5xx');
    expect(outcome.errorMessage?.length).toBe(MAX_ERROR_MESSAGE_CHARS);
  });
});

describe("the default total deadline follows the request's size", () => {
  it("'by-size' gives a 1,024-in/1,024-out request 600 s + 1 ms a prompt token + 250 ms an output token", async () => {
    const url = await hostile(() => undefined); // never answers
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const client = createProtocolClient('sglang', {
        baseUrl: url,
        stream: true,
        sampling: { temperature: 0, ignoreEos: true },
        clock: systemClock,
        timeouts: { totalMs: 'by-size' },
      });
      let outcome: ClientOutcome | undefined;
      const sent = client.send({ requestId: 'by-size', workload: { datasetIndex: 0, prompt: 'x', inputLength: 1024, outputLength: 1024 } }).then((settled) => {
        outcome = settled;
      });
      vi.advanceTimersByTime(857_023);
      await Promise.resolve();
      expect(outcome).toBeUndefined();
      vi.advanceTimersByTime(1);
      await sent;
      expect(outcome?.error).toBe('total_timeout');
      expect(outcome?.errorMessage).toContain('857024 ms');
      vi.useRealTimers();
      await client.close();
    } finally {
      vi.useRealTimers();
    }
  });
});
