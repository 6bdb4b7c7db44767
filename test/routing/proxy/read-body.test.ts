import { connect } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock/clock.js';
import { createBuiltinRoutingPolicy } from '../../../src/routing/policies/registry.js';
import { startRouter } from '../../../src/routing/router/index.js';
import { startTaps } from '../../../src/routing/tap/index.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../scripted-upstream.js';

/**
 * The builtin router and the taps read each request body whole (to route it, retry it, find its id); a 1.5 GB POST
 * took the router to 3 GB. Scaled down: a 1 MiB cap and 3 MiB bodies, with and without a Content-Length.
 */
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

const CAP_BYTES = 1024 * 1024;

async function upstream(): Promise<ScriptedUpstream> {
  const started = await startScriptedUpstream('u0');
  closers.push(() => started.close());
  return started;
}

/** Sends a POST of `bodyBytes` over a raw socket and returns the status line of the answer (or '' if none came). */
function postRaw(url: string, bodyBytes: number, declareLength: boolean): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let answer = '';
    socket.on('data', (piece: Buffer) => (answer += piece.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(answer.split('\r\n')[0] ?? ''));
    const framing = declareLength ? `content-length: ${bodyBytes}` : 'transfer-encoding: chunked';
    socket.write(`POST /generate HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\nx-request-id: big\r\n${framing}\r\n\r\n`);
    const piece = Buffer.alloc(256 * 1024, 0x61);
    let sent = 0;
    const writeMore = (): void => {
      while (sent < bodyBytes && !socket.destroyed) {
        sent += piece.length;
        const written = declareLength ? socket.write(piece) : socket.write(`${piece.length.toString(16)}\r\n${piece.toString('latin1')}\r\n`);
        if (!written) {
          socket.once('drain', writeMore);
          return;
        }
      }
      if (!declareLength && !socket.destroyed) socket.write('0\r\n\r\n');
    };
    writeMore();
    setTimeout(() => socket.destroy(), 8000).unref();
  });
}

describe('request bodies past the relay cap are refused with 413, never read whole', () => {
  it('the builtin router: a 3 MiB body under a 1 MiB cap, declared or chunked, is 413 and never reaches the worker', async () => {
    const worker = await upstream();
    const router = await startRouter({ workerUrls: [worker.url], policy: createBuiltinRoutingPolicy('round_robin'), maxRequestBodyBytes: CAP_BYTES });
    closers.push(() => router.close());
    expect(await postRaw(router.url, 3 * CAP_BYTES, true)).toBe('HTTP/1.1 413 Payload Too Large');
    expect(await postRaw(router.url, 3 * CAP_BYTES, false)).toBe('HTTP/1.1 413 Payload Too Large');
    expect(worker.seen.filter((seen) => seen.path === '/generate')).toHaveLength(0);
    // A body within the cap is routed as before.
    const small = await request(`${router.url}/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'hi', stream: false }) });
    expect(small.statusCode).toBe(200);
    await small.body.dump();
  });

  it('a tap: the same body is 413 and never reaches its server', async () => {
    const server = await upstream();
    const taps = await startTaps({ upstreamUrls: [server.url], clock: systemClock, maxRequestBodyBytes: CAP_BYTES });
    closers.push(() => taps.close());
    const tapUrl = taps.tapUrls[0] as string;
    expect(await postRaw(tapUrl, 3 * CAP_BYTES, false)).toBe('HTTP/1.1 413 Payload Too Large');
    expect(await postRaw(tapUrl, 3 * CAP_BYTES, true)).toBe('HTTP/1.1 413 Payload Too Large');
    expect(server.seen.filter((seen) => seen.path === '/generate')).toHaveLength(0);
  });
});
