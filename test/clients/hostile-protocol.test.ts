import { spawn } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import type { Server as HttpServer } from 'node:http';
import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock/clock.js';
import { createProtocolClient } from '../../src/clients/registry.js';
import type { ClientRequest, ProtocolClientOptions } from '../../src/types/client.js';
import type { ClientOutcome } from '../../src/types/record.js';
import { assertCliBuilt } from '../helpers/cli.js';

/**
 * Blame where it belongs (issue 29): protocol oddities get a class and a cause of their own, and servelab's own limits
 * (file descriptors, memory) are the harness's, never the server's. The servers write raw bytes on loopback port 0.
 */

const servers: (Server | HttpServer)[] = [];
const sockets = new Set<Socket>();

afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  for (const server of servers.splice(0)) await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** A TCP server that, once a request's head has arrived, writes `answer` and leaves the connection open. */
async function rawServer(answer: Buffer | string): Promise<string> {
  const server = createServer((socket) => {
    sockets.add(socket);
    let received = '';
    socket.on('data', (piece: Buffer) => {
      received += piece.toString('latin1');
      // The client's body is a small JSON object after the head: answering once the head is complete is enough.
      if (received.includes('\r\n\r\n')) {
        received = '';
        socket.write(answer);
      }
    });
    socket.on('error', () => undefined);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const REQUEST: ClientRequest = { requestId: 'odd-1', workload: { datasetIndex: 0, prompt: 'one two', inputLength: 2, outputLength: 4 } };

async function send(url: string, options: Partial<ProtocolClientOptions> = {}): Promise<ClientOutcome> {
  const client = createProtocolClient('sglang', {
    baseUrl: url,
    stream: true,
    sampling: { temperature: 0, ignoreEos: true },
    clock: systemClock,
    // A deadline well past what each case needs: the old code ended these only at a deadline (or never).
    timeouts: { totalMs: 8000 },
    ...options,
  });
  try {
    return await client.send(REQUEST);
  } finally {
    await client.close();
  }
}

const FINAL_EVENT = `data: ${JSON.stringify({ text: 'a', meta_info: { id: 'r', completion_tokens: 1, finish_reason: { type: 'length' } } })}\n\n`;

function chunked(body: string): string {
  return `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;
}

describe('protocol oddities get a precise class and cause', () => {
  it('an answer with no status line is protocol_error at once, not connect_refused when the server gives up', async () => {
    const outcome = await send(await rawServer('hello, this is not HTTP\r\n'));
    expect(outcome.error).toBe('protocol_error');
    expect(outcome.errorMessage).toContain('no HTTP status line');
    expect(outcome.errorMessage).toContain('hello, this is not HTTP');
  });

  it('both Content-Length and Transfer-Encoding: chunked is protocol_error', async () => {
    const body = chunked(FINAL_EVENT);
    const outcome = await send(await rawServer(`HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: ${body.length}\r\ntransfer-encoding: chunked\r\n\r\n${body}`));
    expect(outcome.error).toBe('protocol_error');
    expect(outcome.errorMessage).toContain('both Content-Length and Transfer-Encoding: chunked');
  });

  it('a gzip-encoded stream is protocol_error naming the encoding, not stream_truncated with no cause', async () => {
    const body = gzipSync(FINAL_EVENT);
    const head = `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-encoding: gzip\r\ncontent-length: ${body.length}\r\n\r\n`;
    const outcome = await send(await rawServer(Buffer.concat([Buffer.from(head, 'latin1'), body])));
    expect(outcome.error).toBe('protocol_error');
    expect(outcome.errorMessage).toContain('Content-Encoding: gzip');
  });

  it('status 999 is protocol_error, not counted as a 5xx', async () => {
    const outcome = await send(await rawServer('HTTP/1.1 999 Odd\r\ncontent-length: 2\r\n\r\nno'));
    expect(outcome.error).toBe('protocol_error');
    expect(outcome.httpStatus).toBe(999);
    expect(outcome.errorMessage).toContain('outside the 100-599');
  });

  it('a redirect is http_3xx, naming the fix, not network_error', async () => {
    const outcome = await send(await rawServer('HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:1/generate\r\ncontent-length: 0\r\n\r\n'));
    expect(outcome.error).toBe('http_3xx');
    expect(outcome.httpStatus).toBe(302);
    expect(outcome.errorMessage).toContain('does not follow');
  });

  it('on the undici transport too: no status line, status 999 and a gzip stream are protocol_error', async () => {
    expect((await send(await rawServer('hello, this is not HTTP\r\n\r\n'), { httpTransport: 'undici' })).error).toBe('protocol_error');
    expect((await send(await rawServer('HTTP/1.1 999 Odd\r\ncontent-length: 2\r\n\r\nno'), { httpTransport: 'undici' })).error).toBe('protocol_error');
    const body = gzipSync(FINAL_EVENT);
    const head = `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-encoding: gzip\r\ncontent-length: ${body.length}\r\n\r\n`;
    const gzipped = await send(await rawServer(Buffer.concat([Buffer.from(head, 'latin1'), body])), { httpTransport: 'undici' });
    expect(gzipped.error).toBe('protocol_error');
    expect(gzipped.errorMessage).toContain('Content-Encoding: gzip');
  });
});

describe("servelab's own limits are the harness's", () => {
  it('the in-flight body budget: of two answers that together pass it, one fails as harness_limit and the other succeeds', async () => {
    // Two non-streamed 600 KB answers under an 800 KB budget; each pauses after 500 KB until a connection has closed
    // (the client cut the one that passed the budget), so both halves are held at once.
    const text = 'a'.repeat(600 * 1024);
    const body = JSON.stringify({ text, meta_info: { id: 'r', completion_tokens: 1, finish_reason: { type: 'length' } } });
    let closed = 0;
    const server = createHttpServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.on('close', () => closed++);
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        response.write(body.slice(0, 500 * 1024));
        const wait = setInterval(() => {
          if (closed === 0 && !response.destroyed) return;
          clearInterval(wait);
          if (!response.destroyed) response.end(body.slice(500 * 1024));
        }, 5);
        setTimeout(() => clearInterval(wait), 8000).unref();
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = createProtocolClient('sglang', {
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      stream: false,
      sampling: { temperature: 0, ignoreEos: true },
      clock: systemClock,
      timeouts: { totalMs: 8000 },
      limits: { maxInFlightBodyBytes: 800 * 1024 },
    });
    try {
      const outcomes = await Promise.all([client.send(REQUEST), client.send({ ...REQUEST, requestId: 'odd-2' })]);
      const errors = outcomes.map((outcome) => outcome.error ?? 'ok').sort();
      expect(errors).toEqual(['harness_limit', 'ok']);
      expect(outcomes.find((outcome) => outcome.error !== undefined)?.errorMessage).toContain('maxInFlightBodyBytes');
    } finally {
      server.closeAllConnections();
      await client.close();
    }
  });

  it('running out of file descriptors (ulimit -n 100, 400 requests at once) is harness_limit, not the server\'s network_error', async () => {
    assertCliBuilt();
    const server = createHttpServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        setTimeout(() => response.end(FINAL_EVENT), 300);
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dist = (path: string): string => fileURLToPath(new URL(`../../dist/src/${path}`, import.meta.url));
    // The built client in a process of its own, whose open-file limit is lowered by the shell that starts it.
    const script = `
      const { createProtocolClient } = await import(${JSON.stringify(dist('clients/registry.js'))});
      const { systemClock } = await import(${JSON.stringify(dist('clock/clock.js'))});
      const client = createProtocolClient('sglang', { baseUrl: ${JSON.stringify(url)}, stream: true, sampling: { temperature: 0, ignoreEos: true }, clock: systemClock, timeouts: { totalMs: 20000 } });
      const outcomes = await Promise.all(Array.from({ length: 400 }, (_, index) => client.send({ requestId: 'fd-' + index, workload: { datasetIndex: index, prompt: 'x', inputLength: 1, outputLength: 4 } })));
      await client.close();
      const counts = {};
      for (const outcome of outcomes) counts[outcome.error ?? 'ok'] = (counts[outcome.error ?? 'ok'] ?? 0) + 1;
      console.log(JSON.stringify({ counts, message: outcomes.find((outcome) => outcome.error === 'harness_limit')?.errorMessage }));
    `;
    const child = spawn('bash', ['-c', 'ulimit -n 100 && exec "$0" --input-type=module -e "$1"', process.execPath, script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (piece: Buffer) => (stdout += piece.toString()));
    child.stderr.on('data', (piece: Buffer) => (stderr += piece.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const result = JSON.parse(stdout) as { counts: Record<string, number>; message?: string };
    expect(result.counts['harness_limit']).toBeGreaterThan(0);
    expect(result.counts['network_error']).toBeUndefined();
    expect(result.message).toMatch(/^servelab's own limit, not the server's \(raise the open-file limit \(ulimit -n\)/);
  }, 30_000);
});
