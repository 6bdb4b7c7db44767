import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SocketPool } from '../../src/clients/common/socket-pool.js';
import type { SocketResponseHandler } from '../../src/clients/common/socket-pool.js';
import { sleep } from './helpers/scripted-server.js';

/** A raw TCP server: each request head+body received is answered by `answer` with exact bytes. */
interface RawServer {
  url: URL;
  connections: number;
  received: string[];
  close(): Promise<void>;
}

type Answer = (socket: Socket, requestIndex: number) => void | Promise<void>;

async function startRawServer(answer: Answer): Promise<RawServer> {
  const sockets = new Set<Socket>();
  const state = { connections: 0, received: [] as string[], requests: 0 };
  const server: Server = createServer((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let pending = '';
    socket.on('data', (data: Buffer) => {
      pending += data.toString('latin1');
      for (;;) {
        const headEnd = pending.indexOf('\r\n\r\n');
        if (headEnd < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(pending.slice(0, headEnd))?.[1] ?? 0);
        if (pending.length < headEnd + 4 + length) return;
        state.received.push(pending.slice(0, headEnd + 4 + length));
        pending = pending.slice(headEnd + 4 + length);
        void answer(socket, state.requests++);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: new URL(`http://127.0.0.1:${port}`),
    get connections() {
      return state.connections;
    },
    received: state.received,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface Recorded {
  status?: number;
  body: string;
  pieces: number;
  done: 'complete' | 'error';
  error?: Error & { code?: string };
}

function send(pool: SocketPool, body = '{"x":1}'): Promise<Recorded> {
  return new Promise((resolve) => {
    const recorded: Recorded = { body: '', pieces: 0, done: 'complete' };
    const handler: SocketResponseHandler = {
      onConnect: () => undefined,
      onHeaders: (status) => {
        recorded.status = status;
        return true;
      },
      onData: (chunk) => {
        recorded.body += chunk.toString('utf8');
        recorded.pieces++;
        return true;
      },
      onComplete: () => resolve(recorded),
      onError: (error) => {
        recorded.done = 'error';
        recorded.error = error;
        resolve(recorded);
      },
    };
    pool.dispatch({ path: '/generate', headers: ['content-type', 'application/json', 'x-request-id', 'r1'], body }, handler);
  });
}

const OK_CHUNKED = 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n';

describe('SocketPool (lean HTTP/1.1 client)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()?.();
  });

  async function setup(answer: Answer, options: ConstructorParameters<typeof SocketPool>[1] = {}) {
    const server = await startRawServer(answer);
    const pool = new SocketPool(server.url, options);
    cleanups.push(() => server.close(), () => pool.destroy());
    return { server, pool };
  }

  it('writes a well-formed request with host, keep-alive, content-length and the given headers', async () => {
    const { server, pool } = await setup((socket) => void socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'));
    const result = await send(pool, '{"text":"héllo"}');
    expect(result).toMatchObject({ status: 200, body: 'ok', done: 'complete' });
    const request = server.received[0] ?? '';
    expect(request.startsWith('POST /generate HTTP/1.1\r\n')).toBe(true);
    expect(request).toContain(`host: ${server.url.host}\r\n`);
    expect(request).toContain('connection: keep-alive\r\n');
    expect(request).toContain(`content-length: ${Buffer.byteLength('{"text":"héllo"}')}\r\n`);
    expect(request).toContain('x-request-id: r1\r\n');
  });

  it('decodes chunked bodies cut anywhere: sizes, extensions, CRLFs and trailers split across reads', async () => {
    const wire = `${OK_CHUNKED}5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nx-trailer: yes\r\n\r\n`;
    const { pool } = await setup(async (socket) => {
      for (let offset = 0; offset < wire.length; offset += 3) {
        socket.write(wire.slice(offset, offset + 3));
        await sleep(1);
      }
    });
    const result = await send(pool);
    expect(result).toMatchObject({ status: 200, body: 'hello, world', done: 'complete' });
  });

  it('keeps concurrent responses apart while their pieces interleave (all sockets read into one shared buffer)', async () => {
    const wireOf = (index: number): string => {
      const text = `response ${index} `.repeat(20);
      return `${OK_CHUNKED}${text.length.toString(16)}\r\n${text}\r\n0\r\n\r\n`;
    };
    const { pool } = await setup(async (socket, index) => {
      const wire = wireOf(index);
      for (let offset = 0; offset < wire.length; offset += 7) {
        socket.write(wire.slice(offset, offset + 7));
        await sleep(0);
      }
    });
    const results = await Promise.all(Array.from({ length: 6 }, () => send(pool)));
    const bodies = results.map((result) => result.body).sort();
    const expected = Array.from({ length: 6 }, (_, index) => `response ${index} `.repeat(20)).sort();
    expect(bodies).toEqual(expected);
    expect(results.every((result) => result.done === 'complete' && result.pieces > 1)).toBe(true);
  });

  it('skips 1xx heads, reads content-length and close-delimited bodies', async () => {
    const { pool } = await setup((socket, index) => {
      if (index === 0) socket.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 3\r\n\r\nabc');
      else socket.end('HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nuntil the end');
    });
    expect(await send(pool)).toMatchObject({ status: 201, body: 'abc', done: 'complete' });
    expect(await send(pool)).toMatchObject({ status: 200, body: 'until the end', done: 'complete' });
  });

  it('reuses a keep-alive socket, and opens a new one after the server closed the idle one', async () => {
    const { server, pool } = await setup((socket, index) => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nx');
      if (index === 1) setTimeout(() => socket.end(), 5);
    });
    await send(pool);
    await send(pool);
    expect(server.connections).toBe(1);
    await sleep(50); // the server closed the idle socket meanwhile
    expect(await send(pool)).toMatchObject({ status: 200, done: 'complete' });
    expect(server.connections).toBe(2);
  });

  it('closes idle sockets after the keep-alive time', async () => {
    const { server, pool } = await setup((socket) => void socket.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n'), {
      keepAliveMs: 30,
    });
    await send(pool);
    await sleep(80);
    await send(pool);
    expect(server.connections).toBe(2);
  });

  it('queues requests beyond maxConnections and serves them as sockets free up', async () => {
    const { server, pool } = await setup(async (socket) => {
      await sleep(20);
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
    }, { maxConnections: 2 });
    const results = await Promise.all([1, 2, 3, 4, 5].map(() => send(pool)));
    for (const result of results) expect(result).toMatchObject({ status: 200, body: 'ok', done: 'complete' });
    expect(server.connections).toBe(2);
  });

  it('fails a response that ends early, is not HTTP, or has bytes after its end', async () => {
    const { pool } = await setup((socket, index) => {
      if (index === 0) socket.end(`${OK_CHUNKED}5\r\nhel`);
      else if (index === 1) socket.write('SSH-2.0-OpenSSH\r\n\r\n');
      else socket.write('HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nxEXTRA');
    });
    const early = await send(pool);
    expect(early).toMatchObject({ status: 200, done: 'error', body: 'hel' });
    expect(early.error?.code).toBe('SOCKET_CLOSED');
    const notHttp = await send(pool);
    expect(notHttp.error?.code).toBe('HTTP_PARSE');
    const extra = await send(pool);
    expect(extra.error?.code).toBe('HTTP_PARSE');
  });

  it('close() waits for requests in flight; destroy() ends them with CLIENT_DESTROYED', async () => {
    const { pool } = await setup(async (socket) => {
      await sleep(50);
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nx');
    });
    const inFlight = send(pool);
    await sleep(5);
    await pool.close();
    expect(await inFlight).toMatchObject({ done: 'complete', body: 'x' });
    const other = await setup(() => undefined);
    const hanging = send(other.pool);
    await sleep(20);
    await other.pool.destroy();
    expect((await hanging).error?.code).toBe('CLIENT_DESTROYED');
  });
});
