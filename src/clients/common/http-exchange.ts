import type { Dispatcher } from 'undici';
import type { Clock } from '../../clock/clock.js';
import type { ClientLimits, ClientTimeouts } from '../../types/client.js';
import type { ClientOutcome } from '../../types/record.js';
import type { Milliseconds } from '../../types/time.js';
import { DEFAULT_MAX_SSE_EVENT_BYTES, SseParser } from '../sse/sse-parser.js';
import type { DecodeFailure, ResponseDecoder } from './response-decoder.js';
import { httpErrorMessage, malformed, truncateMessage } from './response-decoder.js';
import { checkTokenCount } from './token-timeline.js';
import type { BodyBudget } from './body-budget.js';
import { classifyTransportError, describeTransportError } from './transport-errors.js';

/** How much of a non-2xx body is read to explain the error; the connection is cut there. */
export const MAX_ERROR_BODY_BYTES = 4096;
/**
 * How long a non-2xx body may take after its headers. The request has failed already (the status says so); the body
 * only explains why, and a server writes it with the headers. One whose body never ended held its request for the whole
 * total deadline.
 */
export const ERROR_BODY_WAIT_MS = 1000;

/**
 * The default cap on a non-streamed 2xx body: far above any real answer (a 32k-token answer with top-20 logprobs is a
 * few tens of MB) and far below V8's longest string (about 512 MiB), which a larger body would crash the process on.
 */
export const DEFAULT_MAX_BODY_BYTES = 128 * 1024 * 1024;

/** Caps an exchange enforces: the client's size limits and the request's own token limit. */
export interface ExchangeLimits extends ClientLimits {
  maxOutputTokens?: number;
}

/** Given to the transport to tear down a request whose outcome is already settled (deadline, abort, bad body). */
class ExchangeCancelled extends Error {
  constructor() {
    super('request cancelled by the client');
    this.name = 'ExchangeCancelled';
  }
}

/**
 * One request's life on the wire, as a handler in undici's callback style (onConnect, onHeaders, onData, onComplete,
 * onError). Both transports drive it: our lean `SocketPool` and undici's `Pool` (whose HTTP/1.1 client calls these
 * methods directly, so no adapter object is created and response headers are never parsed into an object — nothing
 * here needs them). The outcome is settled exactly once; anything reported afterwards is ignored.
 *
 * Clock readings: `arrivalTime` is read in `onConnect`, which both transports call synchronously on the connection
 * right before they serialise and write the request to the socket — after any wait for a free pooled connection and
 * after the TCP connect, so neither is counted as time in the system under test. The reading is early by the time it
 * takes to build the header string and hand it to the socket (a few microseconds). Every body chunk is stamped once,
 * when the transport hands it over, and every event in that chunk shares the stamp (they arrived together).
 */
export class HttpExchange implements Dispatcher.DispatchHandler {
  readonly #clock: Clock;
  readonly #decoder: ResponseDecoder;
  readonly #stream: boolean;
  readonly #resolve: (outcome: ClientOutcome) => void;
  /** The requests that share this one's abort signal; it leaves the group when settled. */
  #signalGroup: Set<HttpExchange> | undefined = undefined;

  #settled = false;
  #abort: ((error?: Error) => void) | undefined = undefined;
  #arrivalMs: Milliseconds | undefined = undefined;
  #status: number | undefined = undefined;
  #parser: SseParser | undefined = undefined;
  #bodyChunks: Buffer[] | undefined = undefined;
  #bodyBytes = 0;
  #chunkMs: Milliseconds = 0;
  #eventFailure: DecodeFailure | undefined = undefined;
  #totalTimer: NodeJS.Timeout | undefined = undefined;
  readonly #firstByteMs: Milliseconds | undefined;
  readonly #idleMs: Milliseconds | undefined;
  readonly #maxBodyBytes: number;
  readonly #maxSseEventBytes: number;
  readonly #maxOutputTokens: number;
  readonly #bodyBudget: BodyBudget | undefined;
  /** Bytes of this answer held now (taken from the client's body budget, given back when settled). */
  #heldBytes = 0;
  /** Events the chunk being read completed (set by the parser's callback during `push`). */
  #eventsInChunk = 0;
  /**
   * The first-byte deadline until the headers arrive, then the idle deadline, refreshed by progress only: a stream's
   * events (a comment, a keep-alive line or a drip of bytes inside one event is not progress) or a 2xx body's pieces.
   * After an error status it is the short wait for the error's body.
   */
  #gapTimer: NodeJS.Timeout | undefined = undefined;

  constructor(
    clock: Clock,
    decoder: ResponseDecoder,
    stream: boolean,
    resolve: (outcome: ClientOutcome) => void,
    timeouts: ClientTimeouts,
    limits: ExchangeLimits = {},
    bodyBudget?: BodyBudget,
  ) {
    this.#bodyBudget = bodyBudget;
    this.#maxBodyBytes = limits.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.#maxSseEventBytes = limits.maxSseEventBytes ?? DEFAULT_MAX_SSE_EVENT_BYTES;
    const maxOutputTokens = limits.maxOutputTokens;
    this.#maxOutputTokens = maxOutputTokens !== undefined && maxOutputTokens > 0 ? maxOutputTokens : Number.POSITIVE_INFINITY;
    this.#firstByteMs = timeouts.firstByteMs;
    this.#idleMs = timeouts.idleMs;
    this.#clock = clock;
    this.#decoder = decoder;
    this.#stream = stream;
    this.#resolve = resolve;
  }

  /** Joins the group of requests that one abort signal cancels. */
  joinSignalGroup(group: Set<HttpExchange>): void {
    this.#signalGroup = group;
    group.add(this);
  }

  /** Starts the total deadline; it counts from the moment the request is handed to the pool. */
  startTotalDeadline(totalMs: Milliseconds): void {
    this.#totalTimer = setTimeout(onTotalDeadline, totalMs, this, totalMs);
  }

  /** Ends the request now with the given failure (a deadline, the run's abort signal). */
  cancel(failure: DecodeFailure): void {
    if (this.#settled) return;
    this.#settle(failure);
    // Before onConnect there is nothing to tear down yet; onConnect aborts as soon as undici calls it.
    this.#abort?.(new ExchangeCancelled());
  }

  onConnect(abort: (error?: Error) => void): void {
    this.#abort = abort;
    if (this.#settled) {
      abort(new ExchangeCancelled());
      return;
    }
    this.#arrivalMs = this.#clock.nowMs();
    // Retried onto another connection: the deadline restarts with the new write.
    if (this.#gapTimer !== undefined) clearTimeout(this.#gapTimer);
    if (this.#firstByteMs !== undefined) this.#gapTimer = setTimeout(onFirstByteDeadline, this.#firstByteMs, this);
  }

  /** `rawHeaders` come from undici only (the lean pool checks the head itself, socket-pool.ts). */
  onHeaders(statusCode: number, rawHeaders?: Buffer[] | string[] | null): boolean {
    if (this.#settled) return true;
    const encoding = rawHeaders === undefined || rawHeaders === null ? undefined : contentEncodingOf(rawHeaders);
    // Only a 2xx body is decoded; an error's body is just its explanation.
    if (encoding !== undefined && encoding !== 'identity' && statusCode >= 200 && statusCode < 300) {
      this.#status = statusCode;
      this.cancel({
        error: 'protocol_error',
        message: `HTTP ${statusCode} with Content-Encoding: ${encoding.slice(0, 40)}; the client asks for no encoding and reads plain bodies only`,
      });
      return true;
    }
    if (statusCode > 599 || statusCode < 100) {
      this.#status = statusCode;
      this.cancel({ error: 'protocol_error', message: `HTTP status ${statusCode} is outside the 100-599 that HTTP defines` });
      return true;
    }
    if (statusCode < 200) return true; // 1xx informational answers are followed by the real one
    this.#status = statusCode;
    if (this.#gapTimer !== undefined) clearTimeout(this.#gapTimer);
    if (statusCode >= 300) this.#gapTimer = setTimeout(onErrorBodyWaitOver, Math.min(ERROR_BODY_WAIT_MS, this.#idleMs ?? ERROR_BODY_WAIT_MS), this);
    else this.#gapTimer = this.#idleMs === undefined ? undefined : setTimeout(onIdleDeadline, this.#idleMs, this);
    if (statusCode >= 300 || !this.#stream) this.#bodyChunks = [];
    else this.#parser = new SseParser((data) => this.#onEvent(data), { maxEventBytes: this.#maxSseEventBytes });
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.#settled) return true;
    const parser = this.#parser;
    if (parser !== undefined) {
      this.#chunkMs = this.#clock.nowMs();
      this.#bodyBytes += chunk.length;
      if (!parser.push(chunk)) {
        this.cancel(malformed(`one server-sent event passed the cap of ${this.#maxSseEventBytes} bytes (setting maxSseEventBytes)`));
        return true;
      }
      // Events are progress; bytes alone (comments, a drip inside one event) are not. One refresh per chunk, however
      // many events it carried.
      if (this.#eventsInChunk > 0) {
        this.#eventsInChunk = 0;
        this.#gapTimer?.refresh();
      }
      if (!this.#hold(parser.heldBytes)) return true;
      const failure = this.#eventFailure;
      if (failure !== undefined) this.cancel(failure);
      return true;
    }
    const bodyChunks = this.#bodyChunks;
    if (bodyChunks !== undefined) {
      const status = this.#status ?? 0;
      if (status >= 300) {
        const kept = chunk.subarray(0, Math.max(0, MAX_ERROR_BODY_BYTES - this.#bodyBytes));
        bodyChunks.push(Buffer.from(kept));
        this.#bodyBytes += kept.length;
        // Enough to explain the error: the rest is never read.
        if (this.#bodyBytes >= MAX_ERROR_BODY_BYTES) this.cancel(this.#httpErrorFailure());
        return true;
      }
      this.#gapTimer?.refresh();
      if (this.#bodyBytes + chunk.length > this.#maxBodyBytes) {
        // Cut the connection at once: the rest of the body is never read, let alone held.
        this.cancel(malformed(`the answer's body passed the cap of ${this.#maxBodyBytes} bytes (setting maxBodyBytes)`));
        return true;
      }
      if (!this.#hold(this.#bodyBytes + chunk.length)) return true;
      // Copied: the socket transport reads every response into one shared buffer that the next read overwrites.
      bodyChunks.push(Buffer.from(chunk));
      this.#bodyBytes += chunk.length;
    }
    return true;
  }

  onComplete(): void {
    if (this.#settled) return;
    const status = this.#status;
    if (status === undefined || status >= 300) {
      this.#settleHttpError();
      return;
    }
    const parser = this.#parser;
    if (parser !== undefined) {
      const endedInsideEvent = parser.end();
      if (this.#decoder.complete) this.#settle(undefined);
      else {
        this.#settle({
          error: 'stream_truncated',
          message: endedInsideEvent
            ? 'the stream ended in the middle of an event, before its final chunk'
            : 'the stream ended before its final chunk (no finish_reason and no [DONE])',
        });
      }
      return;
    }
    const nowMs = this.#clock.nowMs();
    const text = this.#bodyText();
    this.#settle(this.#decoder.onBody(text, nowMs));
  }

  onError(error: Error): void {
    if (this.#settled) return;
    const status = this.#status;
    if (status !== undefined && status >= 300) {
      this.#settleHttpError();
      return;
    }
    // A stream that already said it is finished succeeded, whatever happens to the connection afterwards.
    if (this.#parser !== undefined && this.#decoder.complete) {
      this.#settle(undefined);
      return;
    }
    const phase = status === undefined ? 'before_response' : 'in_body';
    this.#settle({
      error: classifyTransportError(error, phase),
      message: truncateMessage(describeTransportError(error)),
    });
  }

  /**
   * Moves this answer's share of the client's body budget to `bytes`; false, and the request failed as `harness_limit`,
   * when the client's answers together would pass the budget.
   */
  #hold(bytes: number): boolean {
    const budget = this.#bodyBudget;
    if (budget === undefined || bytes === this.#heldBytes) return true;
    if (bytes < this.#heldBytes) {
      budget.give(this.#heldBytes - bytes);
      this.#heldBytes = bytes;
      return true;
    }
    if (!budget.take(bytes - this.#heldBytes)) {
      this.cancel({
        error: 'harness_limit',
        message: `the client's answers in flight together passed its body budget of ${budget.limitBytes} bytes (setting maxInFlightBodyBytes): servelab's own memory limit, not the server's`,
      });
      return false;
    }
    this.#heldBytes = bytes;
    return true;
  }

  #onEvent(data: string): void {
    this.#eventsInChunk++;
    if (this.#eventFailure !== undefined) return;
    this.#eventFailure = this.#decoder.onEvent(data, this.#chunkMs);
  }

  #bodyText(): string {
    const chunks = this.#bodyChunks;
    if (chunks === undefined || chunks.length === 0) return '';
    return chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks).toString('utf8');
  }

  #settleHttpError(): void {
    this.#settle(this.#httpErrorFailure());
  }

  #httpErrorFailure(): DecodeFailure {
    const status = this.#status ?? 0;
    return {
      error: status >= 500 ? 'http_5xx' : status >= 400 ? 'http_4xx' : status >= 300 ? 'http_3xx' : 'protocol_error',
      message:
        status >= 300 && status < 400
          ? `HTTP ${status}: a redirect, which the client does not follow; give the address it leads to (--url)`
          : httpErrorMessage(status, this.#bodyText()),
    };
  }

  /** @internal The error's body took too long: the request fails with the status and what of the body came. */
  errorBodyWaitOver(): void {
    this.cancel(this.#httpErrorFailure());
  }

  #settle(settledFailure: DecodeFailure | undefined): void {
    let failure = settledFailure;
    if (this.#settled) return;
    this.#settled = true;
    if (this.#totalTimer !== undefined) clearTimeout(this.#totalTimer);
    if (this.#gapTimer !== undefined) clearTimeout(this.#gapTimer);
    this.#signalGroup?.delete(this);
    if (this.#heldBytes > 0) {
      this.#bodyBudget?.give(this.#heldBytes);
      this.#heldBytes = 0;
    }
    const clock = this.#clock;
    const outcome: ClientOutcome = { success: failure === undefined };
    if (this.#arrivalMs !== undefined) outcome.arrivalTime = clock.toEpochSeconds(this.#arrivalMs);
    if (this.#status !== undefined) outcome.httpStatus = this.#status;
    if (this.#status !== undefined && this.#status < 300) {
      this.#decoder.fill(outcome, clock);
      // The final count (usage, meta_info) is checked like every streamed one: never more than the request allows.
      if (failure === undefined && outcome.actualOutputTokens !== undefined) {
        // A stream carries at least one byte per token it delivers, so a count above the bytes received is impossible.
        const bound = this.#parser === undefined ? this.#maxOutputTokens : Math.min(this.#maxOutputTokens, this.#bodyBytes);
        failure = checkTokenCount(0, outcome.actualOutputTokens, bound);
        if (failure !== undefined) outcome.success = false;
      }
      // An impossible count is never stored, even on a request that failed for another reason.
      if (outcome.actualOutputTokens !== undefined && checkTokenCount(0, outcome.actualOutputTokens, this.#maxOutputTokens) !== undefined) {
        delete outcome.actualOutputTokens;
      }
    }
    if (failure !== undefined) {
      outcome.error = failure.error;
      outcome.errorMessage = failure.message;
    }
    this.#resolve(outcome);
  }
}

/** The Content-Encoding of a response, lower-cased, from undici's alternating raw header names and values. */
function contentEncodingOf(rawHeaders: Buffer[] | string[]): string | undefined {
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = rawHeaders[index] as Buffer | string;
    if (name.length === 16 && name.toString().toLowerCase() === 'content-encoding') return (rawHeaders[index + 1] as Buffer | string).toString().trim().toLowerCase();
  }
  return undefined;
}

// Deadline callbacks are module functions given the exchange as an argument, so arming a timer allocates no closure.
function onTotalDeadline(exchange: HttpExchange, totalMs: Milliseconds): void {
  exchange.cancel({ error: 'total_timeout', message: `no complete answer within the total timeout of ${totalMs} ms` });
}

function onFirstByteDeadline(exchange: HttpExchange): void {
  exchange.cancel({ error: 'first_byte_timeout', message: 'no response headers within the first-byte timeout' });
}

function onIdleDeadline(exchange: HttpExchange): void {
  exchange.cancel({ error: 'idle_timeout', message: 'no progress (an event of the stream, or a piece of the body) within the idle timeout' });
}

function onErrorBodyWaitOver(exchange: HttpExchange): void {
  exchange.errorBodyWaitOver();
}
