import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimServer, type RunningSimServer } from '../../../src/engine/http/start-sim-server.js';
import { injectBootstrap, newBootstrapRoom } from '../../../src/routing/pd/bootstrap.js';
import { dispatchPdRequest, type PdOutcome } from '../../../src/routing/pd/pd-dispatch.js';

const dispatcher = new Agent();
let prefill: RunningSimServer;
let decode: RunningSimServer;
const extraServers: Server[] = [];

beforeAll(async () => {
  prefill = await startSimServer({ profile: { kind: 'simple', stepMs: 1 }, role: 'prefill' });
  decode = await startSimServer({ profile: { kind: 'simple', stepMs: 1 }, role: 'decode' });
});
afterEach(async () => {
  await Promise.all(extraServers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});
afterAll(async () => {
  await Promise.all([prefill.close(), decode.close(), dispatcher.close()]);
});

async function listen(handler: (incoming: IncomingMessage, response: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  extraServers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A stand-in server that never answers and tells when the request it holds was cancelled. */
async function silentServer(): Promise<{ url: string; cancelled: Promise<void> }> {
  let cancel: () => void = () => undefined;
  const cancelled = new Promise<void>((resolve) => (cancel = resolve));
  const url = await listen((incoming, response) => {
    response.on('close', cancel);
    incoming.resume();
  });
  return { url, cancelled };
}

/** A front server that hands each request to dispatchPdRequest, like the router's PD hook, and keeps the outcome. */
async function front(prefillOrigin: string, decodeOrigin: string): Promise<{ url: string; outcomes: PdOutcome[] }> {
  const outcomes: PdOutcome[] = [];
  const url = await listen((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      // A simulated prefill server serves its bootstrap endpoint on its HTTP port (src/engine/http/pd-http.ts).
      const body = injectBootstrap(Buffer.concat(chunks).toString('utf8'), { host: '127.0.0.1', port: new URL(prefillOrigin).port === '' ? 8998 : Number(new URL(prefillOrigin).port) }, newBootstrapRoom());
      void dispatchPdRequest({ dispatcher, prefillOrigin, decodeOrigin, method: 'POST', path: incoming.url ?? '/', headers: ['content-type', 'application/json', 'content-length', '999'], body, response }).then((outcome) => outcomes.push(outcome));
    });
  });
  return { url, outcomes };
}

const generateBody = (rid: string, stream: boolean): string => JSON.stringify({ rid, text: 'one two three four', stream, sampling_params: { max_new_tokens: 4 } });

describe('dispatchPdRequest', () => {
  it("sends both legs with the room to servers in the prefill and decode roles and streams the decode server's answer", async () => {
    const { url } = await front(prefill.url, decode.url);
    const answer = await fetch(`${url}/generate`, { method: 'POST', body: generateBody('pd-stream', true) });
    expect(answer.status).toBe(200);
    const text = await answer.text();
    expect(text).toContain('data: [DONE]');
    expect(text).toContain('"completion_tokens":4');
  });

  it('relays a prefill failure with its status and cancels the decode leg', async () => {
    const failingPrefill = await listen((incoming, response) => {
      incoming.resume();
      response.writeHead(503, { 'content-type': 'application/json' });
      response.end('{"error":"prefill overloaded"}');
    });
    const waitingDecode = await silentServer();
    const { url, outcomes } = await front(failingPrefill, waitingDecode.url);
    const answer = await fetch(`${url}/generate`, { method: 'POST', body: generateBody('pd-prefill-fails', false) });
    expect(answer.status).toBe(503);
    expect(await answer.text()).toBe('{"error":"prefill overloaded"}');
    await waitingDecode.cancelled;
    await expect.poll(() => outcomes[0]).toMatchObject({ failedLeg: 'prefill', statusCode: 503 });
  });

  it('answers 502 when the decode server cannot be reached, and cancels the prefill leg', async () => {
    const waitingPrefill = await silentServer();
    const { url, outcomes } = await front(waitingPrefill.url, 'http://127.0.0.1:1');
    const answer = await fetch(`${url}/generate`, { method: 'POST', body: generateBody('pd-decode-gone', false) });
    expect(answer.status).toBe(502);
    expect(await answer.text()).toContain('decode_server_error');
    await waitingPrefill.cancelled;
    await expect.poll(() => outcomes[0]).toMatchObject({ failedLeg: 'decode', statusCode: 502 });
  });

  it("holds the decode server's answer until the prefill server answered: a prefill failure after the decode headers is still the client's status", async () => {
    // smg awaits both legs' statuses before it answers (tokio::join! in execute_dual_dispatch_internal): the decode
    // server starts its stream at once (as SGLang's does), the prefill server fails 150 ms later.
    const latePrefill = await listen((incoming, response) => {
      incoming.resume();
      setTimeout(() => {
        response.writeHead(503, { 'content-type': 'application/json' });
        response.end('{"error":"prefill overloaded"}');
      }, 150);
    });
    let decodeCancelled: () => void = () => undefined;
    const cancelled = new Promise<void>((resolve) => (decodeCancelled = resolve));
    const streamingDecode = await listen((incoming, response) => {
      incoming.resume();
      response.on('close', decodeCancelled);
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.flushHeaders();
    });
    const { url, outcomes } = await front(latePrefill, streamingDecode);
    const answer = await fetch(`${url}/generate`, { method: 'POST', body: generateBody('pd-prefill-late', true) });
    expect(answer.status).toBe(503);
    expect(await answer.text()).toBe('{"error":"prefill overloaded"}');
    await cancelled;
    await expect.poll(() => outcomes[0]).toMatchObject({ failedLeg: 'prefill', statusCode: 503 });
  });
});
