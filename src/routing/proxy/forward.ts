import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { forwardedResponseHeaders } from './hop-by-hop.js';

export interface ForwardOptions {
  dispatcher: Dispatcher;
  /** The upstream's origin, e.g. `http://127.0.0.1:30001`. */
  origin: string;
  method: string;
  /** Path with query string, as the client sent it. */
  path: string;
  /** Flat `[name, value, ...]` list, hop-by-hop headers already removed. */
  headers: string[];
  body: Buffer | null;
  /** Where the upstream's answer goes, byte for byte. */
  response: ServerResponse;
  /** Headers added to the upstream's answer (flat list), e.g. the retry count. */
  extraResponseHeaders?: () => Record<string, string>;
  /** Called with the upstream's status as soon as its headers arrive, before they are copied. */
  onResponseStart?: (statusCode: number) => void;
  /** Called after each chunk (and the headers) has been handed to the client socket: for relay-time measurement. */
  onRelayed?: (startedMs: number) => void;
  /** For relay-time measurement; absent means no measurement. */
  nowMs?: () => number;
}

/** How a forward ended. `answered` false means the upstream never sent a status: nothing was written downstream. */
export interface ForwardOutcome {
  answered: boolean;
  statusCode?: number;
  error?: Error;
  /** The client went away before the answer was complete. */
  clientClosed: boolean;
}

/**
 * Sends one request upstream and streams the answer to `response` as it arrives: no buffering, one write per upstream
 * chunk, so server-sent events reach the client when the upstream sends them. Backpressure from a slow client pauses
 * the upstream read. If the client disconnects, the upstream request is aborted.
 *
 * Uses undici's dispatcher interface directly (not `request()`), which skips an intermediate stream per response.
 */
export function forward(options: ForwardOptions): Promise<ForwardOutcome> {
  const { response } = options;
  return new Promise((resolve) => {
    let controller: Dispatcher.DispatchController | undefined;
    let answered = false;
    let statusCode: number | undefined;
    let settled = false;
    let clientClosed = false;
    let waitingForDrain = false;
    let corked = false;
    // Writes made while undici parses one socket read (headers, chunks, the end) are corked and sent together when
    // the parse is over (next tick): one system call instead of one per piece, and no added wait.
    const uncork = (): void => {
      corked = false;
      response.uncork();
    };
    const corkUntilNextTick = (): void => {
      if (corked) return;
      corked = true;
      response.cork();
      process.nextTick(uncork);
    };
    const finish = (error?: Error): void => {
      if (settled) return;
      settled = true;
      response.off('close', onClientClose);
      resolve({ answered, statusCode, error, clientClosed });
    };
    const onClientClose = (): void => {
      if (response.writableFinished) return;
      clientClosed = true;
      controller?.abort(new Error('the client closed the connection'));
    };
    response.on('close', onClientClose);

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(started) {
        controller = started;
        if (clientClosed) started.abort(new Error('the client closed the connection'));
      },
      onResponseStart(_controller, status, headers) {
        // 1xx informational answers are not forwarded; the final status follows.
        if (status < 200) return;
        answered = true;
        statusCode = status;
        options.onResponseStart?.(status);
        const startedMs = options.nowMs?.();
        const forwardedHeaders = forwardedResponseHeaders(headers);
        const extra = options.extraResponseHeaders?.();
        if (extra !== undefined) Object.assign(forwardedHeaders, extra);
        response.writeHead(status, forwardedHeaders);
        // A streamed answer (no length) may wait long for its first chunk: its headers go now (at the uncork).
        if (forwardedHeaders['content-length'] === undefined) {
          corkUntilNextTick();
          response.flushHeaders();
        }
        if (startedMs !== undefined) options.onRelayed?.(startedMs);
      },
      onResponseData(dataController, chunk) {
        const startedMs = options.nowMs?.();
        corkUntilNextTick();
        if (!response.write(chunk) && !waitingForDrain) {
          waitingForDrain = true;
          dataController.pause();
          response.once('drain', () => {
            waitingForDrain = false;
            dataController.resume();
          });
        }
        if (startedMs !== undefined) options.onRelayed?.(startedMs);
      },
      onResponseEnd() {
        response.end();
        finish();
      },
      onResponseError(_controller, error) {
        // Before an answer the caller may retry elsewhere; after one, the stream is cut so the client sees a
        // truncated stream rather than a silently shortened one.
        if (answered && !response.writableEnded) response.destroy(error);
        finish(error);
      },
    };
    try {
      options.dispatcher.dispatch(
        {
          origin: options.origin,
          path: options.path,
          method: options.method as Dispatcher.HttpMethod,
          headers: options.headers,
          body: options.body,
          // The client enforces its own deadlines; a proxy that timed out on a long prefill would invent errors.
          headersTimeout: 0,
          bodyTimeout: 0,
        },
        handler,
      );
    } catch (error) {
      finish(error as Error);
    }
  });
}

/** A short description of an upstream failure, with its error code when there is one (ECONNREFUSED, UND_ERR_SOCKET). */
export function describeUpstreamError(error: Error): string {
  const code = (error as { code?: string }).code;
  return code === undefined ? error.message : `${code}: ${error.message}`;
}

/**
 * Connection pool settings for proxies (router and taps). Idle upstream connections are dropped after 4 s unless the
 * server announces a longer keep-alive: SGLang (uvicorn) and Node servers close idle connections after 5 s, and
 * reusing one the server is closing would fail a request that never reached it.
 */
export const UPSTREAM_AGENT_OPTIONS = { keepAliveTimeout: 4_000, keepAliveMaxTimeout: 600_000, pipelining: 1 } as const;
