import type { ServerResponse } from 'node:http';
import { request as undiciRequest, type Dispatcher } from 'undici';
import { forwardedResponseHeaders } from '../proxy/hop-by-hop.js';

/** One PD request's two legs: the same body (bootstrap fields injected) to a prefill and a decode server. */
export interface PdDispatchOptions {
  dispatcher: Dispatcher;
  prefillOrigin: string;
  decodeOrigin: string;
  method: string;
  /** Path with query string, as the client sent it. */
  path: string;
  /** Flat `[name, value, ...]` list, hop-by-hop headers already removed; a content-length is dropped (the body grew). */
  headers: readonly string[];
  /** The body with bootstrap_host, bootstrap_port and bootstrap_room set (bootstrap.ts). */
  body: string;
  /** Where the decode server's answer goes. */
  response: ServerResponse;
  /**
   * Whether a failure that comes before anything was written to the client is answered here (true, the default) or
   * left to the caller in `PdOutcome.unanswered`, to try another pair (pd-router.ts).
   */
  relayFailures?: boolean;
  /** Headers added to the decode server's answer (the router's retry count). */
  extraResponseHeaders?: Record<string, string>;
}

/** A failure before the client got anything: the failing leg's status (undefined: it gave none) and body. */
export interface UnansweredFailure {
  status: number | undefined;
  body: string | undefined;
}

/** How a PD request ended: which leg failed first, if one did, and the status the client got. */
export interface PdOutcome {
  /** The status written to the client; undefined when the client left before any. */
  statusCode?: number;
  /** The leg that failed first (an error status, or no answer), if any: the other leg was cancelled. */
  failedLeg?: 'prefill' | 'decode';
  error?: string;
  clientClosed: boolean;
  /** With `relayFailures: false`: the failure that came before anything was written to the client, not answered. */
  unanswered?: UnansweredFailure;
}

/** Answers a failure that came before the client got anything: the failing leg's status and body, else 502. */
export function relayPdFailure(response: ServerResponse, leg: 'prefill' | 'decode', failure: UnansweredFailure, message: string, extraHeaders: Record<string, string> = {}): number {
  const text = failure.body ?? JSON.stringify({ error: { type: `${leg}_server_error`, message } });
  const status = failure.status ?? 502;
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...extraHeaders });
  response.end(text);
  return status;
}

function withoutContentLength(headers: readonly string[]): string[] {
  const kept: string[] = [];
  for (let index = 0; index + 1 < headers.length; index += 2) {
    if ((headers[index] as string).toLowerCase() !== 'content-length') kept.push(headers[index] as string, headers[index + 1] as string);
  }
  return kept;
}

/**
 * Sends both legs at once and streams the decode server's answer to the client, as smg's PD router does
 * (`execute_dual_dispatch` in model_gateway/src/routers/http/pd_router.rs): the decode server waits for the KV the
 * prefill server sends it under the shared bootstrap room, so neither leg can wait for the other. The prefill leg's
 * answer is read and dropped. Nothing goes to the client before both legs have answered with a status: smg awaits
 * both sends together (`tokio::join!`) and checks the decode status, then the prefill one, before it answers, so a
 * prefill server that refuses the connection fails the attempt before the client sees anything, whichever leg
 * answered first. When one leg fails (an error status or no answer) the other is cancelled: a decode server left
 * waiting would hold KV for a transfer that never comes, and a prefill server would send KV nobody takes. A failure
 * before the client's answer started is relayed with the failing leg's status (502 when it gave none), or left to the
 * caller (`relayFailures: false`); after, the client's stream is cut.
 */
export function dispatchPdRequest(options: PdDispatchOptions): Promise<PdOutcome> {
  const { response } = options;
  const prefillAbort = new AbortController();
  const decodeAbort = new AbortController();
  const headers = withoutContentLength(options.headers);
  const outcome: PdOutcome = { clientClosed: false };
  let finished = false;
  // Settles once the prefill leg has answered with a success status, or failed: the decode answer waits for it.
  let prefillSettled: () => void = () => undefined;
  const prefillStatusKnown = new Promise<void>((resolve) => (prefillSettled = resolve));

  const fail = (leg: 'prefill' | 'decode', status: number | undefined, message: string, body?: string): void => {
    prefillSettled();
    if (finished) return;
    finished = true;
    outcome.failedLeg = leg;
    outcome.error = message;
    (leg === 'prefill' ? decodeAbort : prefillAbort).abort();
    if (response.headersSent) {
      response.destroy();
      return;
    }
    if (options.relayFailures === false) {
      outcome.unanswered = { status, body };
      return;
    }
    outcome.statusCode = relayPdFailure(response, leg, { status, body }, message);
  };

  response.on('close', () => {
    if (response.writableFinished) return;
    outcome.clientClosed = true;
    prefillAbort.abort();
    decodeAbort.abort();
  });

  const send = (origin: string, signal: AbortSignal): Promise<Dispatcher.ResponseData> =>
    undiciRequest(`${origin}${options.path}`, {
      method: options.method as Dispatcher.HttpMethod,
      headers,
      body: options.body,
      signal,
      dispatcher: options.dispatcher,
    });

  const prefillLeg = (async () => {
    try {
      const answer = await send(options.prefillOrigin, prefillAbort.signal);
      if (answer.statusCode >= 400) {
        const text = await answer.body.text();
        fail('prefill', answer.statusCode, `prefill server ${options.prefillOrigin} answered ${answer.statusCode}`, text);
        return;
      }
      prefillSettled();
      await answer.body.dump({ limit: Number.MAX_SAFE_INTEGER });
    } catch (error) {
      if (!prefillAbort.signal.aborted) fail('prefill', undefined, `prefill server ${options.prefillOrigin} did not answer: ${(error as Error).message}`);
    } finally {
      // Cancelled (the client left, or the decode leg failed): the decode leg must not wait on it any longer.
      prefillSettled();
    }
  })();

  const decodeLeg = (async () => {
    try {
      const answer = await send(options.decodeOrigin, decodeAbort.signal);
      if (answer.statusCode >= 400) {
        const text = await answer.body.text();
        fail('decode', answer.statusCode, `decode server ${options.decodeOrigin} answered ${answer.statusCode}`, text);
        return;
      }
      await prefillStatusKnown;
      if (finished || outcome.clientClosed) {
        // The attempt failed on the prefill side (or the client left) while this answer waited: it is cancelled.
        answer.body.destroy();
        return;
      }
      outcome.statusCode = answer.statusCode;
      response.writeHead(answer.statusCode, { ...forwardedResponseHeaders(answer.headers), ...options.extraResponseHeaders });
      for await (const chunk of answer.body) {
        if (!response.write(chunk as Buffer)) {
          await new Promise((resolve) => {
            response.once('drain', resolve);
            response.once('close', resolve);
          });
        }
      }
      if (!finished) {
        finished = true;
        response.end();
      }
    } catch (error) {
      if (!decodeAbort.signal.aborted) fail('decode', undefined, `decode server ${options.decodeOrigin} did not answer: ${(error as Error).message}`);
    }
  })();

  return Promise.all([prefillLeg, decodeLeg]).then(() => outcome);
}
