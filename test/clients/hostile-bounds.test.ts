import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock/clock.js';
import type { ProtocolName } from '../../src/clients/registry.js';
import { createProtocolClient } from '../../src/clients/registry.js';
import { MAX_ERROR_MESSAGE_CHARS, MAX_FINISH_REASON_CHARS } from '../../src/clients/shared/response-decoder.js';
import type { ClientRequest, ProtocolClientOptions } from '../../src/types/client.js';
import type { ClientOutcome } from '../../src/types/record.js';

/**
 * Hostile servers (issue 29): answers that made the client hold unbounded server text, or kept a request alive without
 * progress. Each server is plain node:http on loopback port 0; sizes are scaled down from the reports (megabytes, not
 * the 30 MB x 160 that took a run to 9 GB): what is checked is that a cap holds, not how much memory breaks it.
 */

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function hostile(handler: Handler): Promise<string> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => handler(request, response));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const REQUEST: ClientRequest = {
  requestId: 'bounds-1',
  workload: { datasetIndex: 0, prompt: 'one two three four', inputLength: 4, outputLength: 16 },
};

async function send(protocol: ProtocolName, url: string, options: Partial<ProtocolClientOptions> = {}): Promise<ClientOutcome> {
  const client = createProtocolClient(protocol, {
    baseUrl: url,
    stream: true,
    sampling: { temperature: 0, ignoreEos: true },
    clock: systemClock,
    ...options,
  });
  try {
    return await client.send(REQUEST);
  } finally {
    await client.close();
  }
}

function sse(response: ServerResponse, events: unknown[]): void {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const event of events) response.write(`data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`);
  response.end();
}

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
