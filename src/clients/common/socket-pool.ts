import { connect } from 'node:net';
import type { Socket } from 'node:net';
import type { Milliseconds } from '../../types/time.js';

/**
 * The callbacks a request handler gets, in undici's handler style (so `HttpExchange` runs on either transport):
 * `onConnect` right before the request is written, `onHeaders` once per final status, `onData` per body piece,
 * then exactly one of `onComplete` / `onError` — unless the handler aborted, after which it hears nothing more.
 * A chunk given to `onData` is valid only during the call (its memory is reused by the next read): copy what you keep.
 */
export interface SocketResponseHandler {
  onConnect(abort: (error?: Error) => void): void;
  onHeaders(statusCode: number): boolean;
  onData(chunk: Buffer): boolean;
  onComplete(): void;
  onError(error: Error): void;
}

export interface SocketRequest {
  path: string;
  /** Header names and values, alternating. */
  headers: string[];
  body: string;
}

export interface SocketPoolOptions {
  /** At most this many sockets (absent: unbounded). */
  maxConnections?: number;
  /** 0 or absent: no connect deadline. */
  connectTimeoutMs?: Milliseconds;
  /** An idle socket is closed after this long (below uvicorn's 5 s keep-alive, so the server never closes it first). */
  keepAliveMs?: Milliseconds;
}

/** An error with a stable `code`, as Node's socket errors have. */
export class SocketPoolError extends Error {
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.name = 'SocketPoolError';
    this.code = code;
  }
}

const DEFAULT_KEEP_ALIVE_MS = 4000;
const MAX_HEAD_BYTES = 64 * 1024;
const CR = 13;
const LF = 10;
/**
 * One read buffer for every socket of every pool. Sockets read into it (node:net's `onread`) instead of getting a new
 * Buffer per read through the stream machinery: at 17 reads per streamed request that allocation and the 'data'
 * event path were a measurable share of the client's CPU (docs/protocols.md, Cost). Reads run one at a time on the event
 * loop and every consumer copies what it keeps past its callback, so sharing it is safe.
 */
const READ_BUFFER_BYTES = 64 * 1024;
let sharedReadBuffer: Buffer | undefined;

interface PendingRequest {
  request: SocketRequest;
  handler: SocketResponseHandler;
}

/**
 * A minimal HTTP/1.1 client for plain-HTTP streaming requests: keep-alive sockets to one origin, one request at a time
 * per socket, responses framed by `Transfer-Encoding: chunked`, `Content-Length` or the connection's end.
 *
 * Why it exists: it does only what a measuring client needs, and on the product path that is cheaper than undici's
 * `Pool`. bench/node-cli-targets.ts (phase `transport`) runs the CLI with `--http-transport socket` and `undici` against
 * the streaming stub in one run: undici cost 1.28x the CPU per streamed request (326 against 254 µs, every undici run
 * above every socket run; November 2026, a busy 2-core machine). Per-chunk timestamps alone would not need it: undici's
 * `Pool.dispatch` also hands each chunk over as it arrives. HTTPS base URLs still go through undici.
 */
export class SocketPool {
  readonly #host: string;
  readonly #port: number;
  readonly #hostHeader: string;
  readonly #maxConnections: number;
  readonly #connectTimeoutMs: number;
  readonly #keepAliveMs: number;
  readonly #idle: PooledConnection[] = [];
  readonly #waiting: PendingRequest[] = [];
  readonly #all = new Set<PooledConnection>();
  #closing = false;
  #onDrained: (() => void) | undefined = undefined;

  constructor(origin: URL, options: SocketPoolOptions = {}) {
    this.#host = origin.hostname.startsWith('[') ? origin.hostname.slice(1, -1) : origin.hostname;
    this.#port = origin.port === '' ? 80 : Number(origin.port);
    this.#hostHeader = origin.host;
    this.#maxConnections = options.maxConnections ?? Number.POSITIVE_INFINITY;
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 0;
    this.#keepAliveMs = options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS;
  }

  dispatch(request: SocketRequest, handler: SocketResponseHandler): void {
    if (this.#closing) {
      handler.onError(new SocketPoolError('CLIENT_CLOSED', 'the client is closed'));
      return;
    }
    const idle = this.#idle.pop();
    if (idle !== undefined) {
      idle.run({ request, handler });
      return;
    }
    if (this.#all.size < this.#maxConnections) {
      const connection = new PooledConnection(this, this.#host, this.#port, this.#connectTimeoutMs, { request, handler });
      this.#all.add(connection);
      return;
    }
    this.#waiting.push({ request, handler });
  }

  /** Waits for requests in flight, then closes every socket. */
  close(): Promise<void> {
    this.#closing = true;
    for (const connection of [...this.#idle]) connection.destroy();
    if (this.#all.size === 0 && this.#waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.#onDrained = resolve;
    });
  }

  /** Cuts every socket now; requests in flight or waiting end with `onError` (code `CLIENT_DESTROYED`). */
  destroy(): Promise<void> {
    this.#closing = true;
    const error = new SocketPoolError('CLIENT_DESTROYED', 'the client was closed while the request was in flight');
    for (const waiting of this.#waiting.splice(0)) waiting.handler.onError(error);
    for (const connection of [...this.#all]) connection.fail(error);
    this.#checkDrained();
    return Promise.resolve();
  }

  /** @internal The head every request on this pool starts with (after the request line). */
  hostLine(): string {
    return `host: ${this.#hostHeader}\r\nconnection: keep-alive\r\n`;
  }

  /** @internal A connection finished a response and can take the next request. */
  release(connection: PooledConnection): void {
    const next = this.#waiting.shift();
    if (next !== undefined) {
      connection.run(next);
      return;
    }
    if (this.#closing) {
      connection.destroy();
      return;
    }
    this.#idle.push(connection);
    connection.startIdleTimer(this.#keepAliveMs);
  }

  /** @internal A connection is gone (closed, failed or destroyed). */
  forget(connection: PooledConnection): void {
    this.#all.delete(connection);
    const idleIndex = this.#idle.indexOf(connection);
    if (idleIndex >= 0) this.#idle.splice(idleIndex, 1);
    // A request waiting for a free socket takes the slot this one left (also while closing: close is graceful).
    const next = this.#waiting.shift();
    if (next !== undefined) {
      const replacement = new PooledConnection(this, this.#host, this.#port, this.#connectTimeoutMs, next);
      this.#all.add(replacement);
    }
    this.#checkDrained();
  }

  #checkDrained(): void {
    if (this.#closing && this.#all.size === 0 && this.#waiting.length === 0 && this.#onDrained !== undefined) {
      const resolve = this.#onDrained;
      this.#onDrained = undefined;
      resolve();
    }
  }
}

const enum Phase {
  Connecting,
  Idle,
  Head,
  ChunkSize,
  ChunkData,
  ChunkEnd,
  Trailers,
  LengthBody,
  CloseBody,
}

/** One keep-alive socket and the response framing state of the request on it. */
class PooledConnection {
  readonly #pool: SocketPool;
  readonly #socket: Socket;
  #phase: Phase = Phase.Connecting;
  #current: PendingRequest | undefined;
  #handler: SocketResponseHandler | undefined = undefined;
  /** Bytes of a head, chunk-size line or trailer line that arrived in pieces. */
  #partial: Buffer | undefined = undefined;
  #remaining = 0;
  #keepAlive = true;
  /** Whether the current request's bytes were handed to the socket. */
  #written = false;
  #connectTimer: NodeJS.Timeout | undefined = undefined;
  #idleTimer: NodeJS.Timeout | undefined = undefined;
  #gone = false;

  constructor(pool: SocketPool, host: string, port: number, connectTimeoutMs: number, first: PendingRequest) {
    this.#pool = pool;
    this.#current = first;
    sharedReadBuffer ??= Buffer.allocUnsafe(READ_BUFFER_BYTES);
    const socket = connect({
      host,
      port,
      noDelay: true,
      onread: { buffer: sharedReadBuffer, callback: (bytesRead, buffer) => this.#onRead(bytesRead, buffer as Buffer) },
    });
    this.#socket = socket;
    if (connectTimeoutMs > 0) this.#connectTimer = setTimeout(onConnectDeadline, connectTimeoutMs, this, connectTimeoutMs);
    socket.on('connect', () => this.#onConnected());
    socket.on('error', (error: Error) => this.fail(error));
    socket.on('close', () => this.#onClose());
  }

  run(pending: PendingRequest): void {
    // The idle timer is left running: when it fires on a busy connection it does nothing (see idleExpired).
    this.#current = pending;
    this.#start();
  }

  /** One timer per connection, re-armed on every release (cheaper than a new timer per request). */
  startIdleTimer(keepAliveMs: number): void {
    if (this.#idleTimer === undefined) {
      this.#idleTimer = setTimeout(onIdleExpired, keepAliveMs, this);
      this.#idleTimer.unref();
    } else {
      this.#idleTimer.refresh();
    }
  }

  /** Closes the socket without telling any handler (used for idle sockets and on close). */
  destroy(): void {
    if (this.#gone) return;
    this.#gone = true;
    this.#handler = undefined;
    this.#current = undefined;
    this.#clearTimers();
    this.#socket.destroy();
    this.#pool.forget(this);
  }

  /** Ends the request on this socket (if any) with `error`, and the socket with it. */
  fail(error: Error): void {
    if (this.#gone) return;
    this.#gone = true;
    this.#clearTimers();
    const handler = this.#handler;
    const waiting = this.#current;
    this.#handler = undefined;
    this.#current = undefined;
    this.#socket.destroy();
    this.#pool.forget(this);
    if (handler !== undefined) handler.onError(error);
    else if (waiting !== undefined) waiting.handler.onError(error);
  }

  #onConnected(): void {
    if (this.#connectTimer !== undefined) {
      clearTimeout(this.#connectTimer);
      this.#connectTimer = undefined;
    }
    if (this.#current === undefined) {
      this.#phase = Phase.Idle;
      this.#pool.release(this);
      return;
    }
    this.#start();
  }

  #start(): void {
    const pending = this.#current as PendingRequest;
    const handler = pending.handler;
    this.#handler = handler;
    this.#phase = Phase.Head;
    this.#keepAlive = true;
    this.#partial = undefined;
    this.#written = false;
    // The abort function is bound to this request, so a late call can never cut the next request on the socket.
    handler.onConnect(() => this.#abort(handler));
    // The handler may abort inside onConnect (its deadline or signal fired while it waited): nothing was written.
    if (this.#handler !== handler) {
      if (!this.#gone) {
        this.#phase = Phase.Idle;
        this.#pool.release(this);
      }
      return;
    }
    const request = pending.request;
    let head = `POST ${request.path} HTTP/1.1\r\n${this.#pool.hostLine()}content-length: ${Buffer.byteLength(request.body)}\r\n`;
    const headers = request.headers;
    for (let index = 0; index + 1 < headers.length; index += 2) head += `${headers[index]}: ${headers[index + 1]}\r\n`;
    this.#written = true;
    this.#socket.write(`${head}\r\n${request.body}`);
  }

  #abort(handler: SocketResponseHandler): void {
    if (this.#handler !== handler) return;
    this.#handler = undefined;
    this.#current = undefined;
    // Called from inside onConnect, nothing is on the wire yet and the socket stays usable (see #start). Otherwise
    // the response is unread: the socket cannot be reused.
    if (this.#written) this.#closeUnusable();
  }

  #closeUnusable(): void {
    if (this.#gone) return;
    this.#gone = true;
    this.#clearTimers();
    this.#socket.destroy();
    this.#pool.forget(this);
  }

  #onClose(): void {
    if (this.#gone) return;
    if (this.#phase === Phase.CloseBody && this.#handler !== undefined) {
      this.#finish();
      return;
    }
    this.fail(new SocketPoolError('SOCKET_CLOSED', 'the server closed the connection'));
  }

  /**
   * `data` is the shared read buffer: its first `bytesRead` bytes are this read's, and nothing may keep it. The view
   * bounds every search below to this read's bytes (the rest of the buffer holds stale bytes of earlier reads).
   */
  #onRead(bytesRead: number, data: Buffer): boolean {
    this.#consume(data.subarray(0, bytesRead));
    return true; // keep reading
  }

  #consume(view: Buffer): void {
    let buffer = view;
    if (this.#partial !== undefined) {
      buffer = Buffer.concat([this.#partial, buffer]);
      this.#partial = undefined;
    }
    let offset = 0;
    const length = buffer.length;
    while (offset < length && !this.#gone) {
      const handler = this.#handler;
      if (handler === undefined) {
        // Bytes with no request to own them (an aborted response, or a server talking out of turn).
        this.#closeUnusable();
        return;
      }
      switch (this.#phase) {
        case Phase.ChunkData: {
          const take = Math.min(this.#remaining, length - offset);
          const piece = buffer.subarray(offset, offset + take);
          offset += take;
          this.#remaining -= take;
          if (this.#remaining === 0) this.#phase = Phase.ChunkEnd;
          handler.onData(piece);
          break;
        }
        case Phase.ChunkSize: {
          const lineEnd = buffer.indexOf(LF, offset);
          if (lineEnd < 0) {
            this.#keepPartial(buffer, offset);
            return;
          }
          const size = parseChunkSize(buffer, offset, lineEnd);
          if (size < 0) {
            this.fail(new SocketPoolError('HTTP_PARSE', 'invalid chunk size in the response body'));
            return;
          }
          offset = lineEnd + 1;
          if (size === 0) this.#phase = Phase.Trailers;
          else {
            this.#remaining = size;
            this.#phase = Phase.ChunkData;
          }
          break;
        }
        case Phase.ChunkEnd: {
          // The CRLF after a chunk's data.
          const lineEnd = buffer.indexOf(LF, offset);
          if (lineEnd < 0) {
            this.#keepPartial(buffer, offset);
            return;
          }
          offset = lineEnd + 1;
          this.#phase = Phase.ChunkSize;
          break;
        }
        case Phase.Trailers: {
          const lineEnd = buffer.indexOf(LF, offset);
          if (lineEnd < 0) {
            this.#keepPartial(buffer, offset);
            return;
          }
          const empty = lineEnd === offset || (lineEnd === offset + 1 && buffer[offset] === CR);
          offset = lineEnd + 1;
          if (empty) {
            if (offset < length) {
              this.fail(new SocketPoolError('HTTP_PARSE', 'bytes after the end of the response'));
              return;
            }
            this.#finish();
          }
          break;
        }
        case Phase.LengthBody: {
          const take = Math.min(this.#remaining, length - offset);
          const piece = buffer.subarray(offset, offset + take);
          offset += take;
          this.#remaining -= take;
          handler.onData(piece);
          if (this.#remaining === 0 && this.#handler !== undefined && !this.#gone) {
            if (offset < length) {
              this.fail(new SocketPoolError('HTTP_PARSE', 'bytes after the end of the response'));
              return;
            }
            this.#finish();
          }
          break;
        }
        case Phase.CloseBody: {
          handler.onData(buffer.subarray(offset, length));
          offset = length;
          break;
        }
        case Phase.Head: {
          // A status line must open the answer: anything else fails at once, not when the server gives up (a server
          // that answered with bare text used to hold the request until it closed, then read as connect_refused).
          if (!startsLikeStatusLine(buffer, offset, length)) {
            this.fail(new SocketPoolError('HTTP_PARSE', `the answer has no HTTP status line; it starts ${JSON.stringify(buffer.toString('latin1', offset, Math.min(length, offset + 40)))}`));
            return;
          }
          const headEnd = buffer.indexOf('\r\n\r\n', offset, 'latin1');
          if (headEnd < 0) {
            if (length - offset > MAX_HEAD_BYTES) {
              this.fail(new SocketPoolError('HTTP_PARSE', 'response headers larger than 64 KiB'));
              return;
            }
            this.#keepPartial(buffer, offset);
            return;
          }
          if (!this.#readHead(buffer, offset, headEnd, length)) return;
          offset = headEnd + 4;
          break;
        }
        default:
          this.#closeUnusable();
          return;
      }
    }
  }

  /** Parses a response head; returns false when the connection failed. */
  #readHead(buffer: Buffer, start: number, end: number, length: number): boolean {
    const head = buffer.toString('latin1', start, end);
    const statusMatch = /^HTTP\/1\.[01] (\d{3})/.exec(head);
    if (statusMatch === null) {
      this.fail(new SocketPoolError('HTTP_PARSE', `the answer is not HTTP/1.1: ${JSON.stringify(head.slice(0, 40))}`));
      return false;
    }
    const status = Number(statusMatch[1]);
    if (status >= 100 && status < 200) return true; // informational: the real head follows
    let contentLength = -1;
    let chunked = false;
    let contentEncoding = '';
    let keepAlive = head.startsWith('HTTP/1.1');
    let lineStart = head.indexOf('\n') + 1;
    while (lineStart > 0 && lineStart < head.length) {
      let lineEnd = head.indexOf('\n', lineStart);
      if (lineEnd < 0) lineEnd = head.length;
      const colon = head.indexOf(':', lineStart);
      if (colon > lineStart && colon < lineEnd) {
        const name = head.slice(lineStart, colon).trim().toLowerCase();
        if (name === 'content-length' || name === 'transfer-encoding' || name === 'connection' || name === 'content-encoding') {
          const value = head.slice(colon + 1, lineEnd).trim().toLowerCase();
          if (name === 'content-encoding') contentEncoding = value;
          else if (name === 'content-length') contentLength = Number(value);
          else if (name === 'transfer-encoding') chunked = value.endsWith('chunked');
          else if (value.includes('close')) keepAlive = false;
          else if (value.includes('keep-alive')) keepAlive = true;
        }
      }
      lineStart = lineEnd + 1;
    }
    // Framing the client cannot trust or bodies it cannot read fail as what they are, before any byte is taken as body.
    if (chunked && contentLength >= 0) {
      this.fail(new SocketPoolError('HTTP_PARSE', `HTTP ${status} with both Content-Length and Transfer-Encoding: chunked, which HTTP/1.1 forbids a server to send (RFC 9112 6.1)`));
      return false;
    }
    // Only a 2xx body is decoded; an error's body is just its explanation, read as it comes.
    if (contentEncoding !== '' && contentEncoding !== 'identity' && status >= 200 && status < 300) {
      this.fail(new SocketPoolError('HTTP_PARSE', `HTTP ${status} with Content-Encoding: ${contentEncoding.slice(0, 40)}; the client asks for no encoding and reads plain bodies only`));
      return false;
    }
    this.#keepAlive = keepAlive;
    const handler = this.#handler as SocketResponseHandler;
    handler.onHeaders(status);
    if (this.#handler === undefined || this.#gone) return false;
    if (status === 204 || status === 304) {
      this.#finishAfterHead(end + 4, length);
      return false;
    }
    if (chunked) this.#phase = Phase.ChunkSize;
    else if (contentLength >= 0 && Number.isFinite(contentLength)) {
      if (contentLength === 0) {
        this.#finishAfterHead(end + 4, length);
        return false;
      }
      this.#remaining = contentLength;
      this.#phase = Phase.LengthBody;
    } else {
      this.#keepAlive = false;
      this.#phase = Phase.CloseBody;
    }
    return true;
  }

  #finishAfterHead(offset: number, length: number): void {
    if (offset < length) {
      this.fail(new SocketPoolError('HTTP_PARSE', 'bytes after the end of the response'));
      return;
    }
    this.#finish();
  }

  #finish(): void {
    const handler = this.#handler;
    this.#handler = undefined;
    this.#current = undefined;
    this.#phase = Phase.Idle;
    if (!this.#keepAlive) this.#closeUnusable();
    // Release before onComplete so the next request can take this socket right away.
    else this.#pool.release(this);
    handler?.onComplete();
  }

  #keepPartial(buffer: Buffer, offset: number): void {
    this.#partial = Buffer.from(buffer.subarray(offset));
  }

  #clearTimers(): void {
    if (this.#connectTimer !== undefined) clearTimeout(this.#connectTimer);
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer);
    this.#connectTimer = undefined;
    this.#idleTimer = undefined;
  }

  /** @internal */
  connectDeadlinePassed(connectTimeoutMs: number): void {
    this.#connectTimer = undefined;
    this.fail(new SocketPoolError('CONNECT_TIMEOUT', `the TCP connect took longer than the connect timeout of ${connectTimeoutMs} ms`));
  }

  /** @internal */
  idleExpired(): void {
    if (this.#phase !== Phase.Idle || this.#handler !== undefined) return;
    this.#closeUnusable();
  }
}

function onConnectDeadline(connection: PooledConnection, connectTimeoutMs: number): void {
  connection.connectDeadlinePassed(connectTimeoutMs);
}

function onIdleExpired(connection: PooledConnection): void {
  connection.idleExpired();
}

const STATUS_LINE_START = Buffer.from('HTTP/', 'latin1');

/** Whether the bytes from `start` are, as far as they go, the start of `HTTP/`. */
function startsLikeStatusLine(buffer: Buffer, start: number, end: number): boolean {
  const count = Math.min(STATUS_LINE_START.length, end - start);
  for (let index = 0; index < count; index++) if (buffer[start + index] !== STATUS_LINE_START[index]) return false;
  return true;
}

/** The hex size at the start of a chunk-size line (extensions after `;` ignored); -1 when invalid. */
function parseChunkSize(buffer: Buffer, start: number, end: number): number {
  let size = 0;
  let digits = 0;
  for (let index = start; index < end; index++) {
    const code = buffer[index] as number;
    let value: number;
    if (code >= 48 && code <= 57) value = code - 48;
    else if (code >= 97 && code <= 102) value = code - 87;
    else if (code >= 65 && code <= 70) value = code - 55;
    else if (code === 59 || code === CR || code === 32 || code === 9) break;
    else return -1;
    size = size * 16 + value;
    digits++;
    if (size > Number.MAX_SAFE_INTEGER / 16) return -1;
  }
  return digits === 0 ? -1 : size;
}
