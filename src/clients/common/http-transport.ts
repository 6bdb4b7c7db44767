import { Pool } from 'undici';
import type { Clock } from '../../clock/clock.js';
import { MAX_RESPONSE_CAP_BYTES } from '../../config/size-limits.js';
import { ServelabError } from '../../errors/servelab-error.js';
import type { ClientLimits, ClientTimeouts, ProtocolClientOptions } from '../../types/client.js';
import type { ClientOutcome } from '../../types/record.js';
import { HttpExchange } from './http-exchange.js';
import { BodyBudget, DEFAULT_MAX_IN_FLIGHT_BODY_BYTES } from './body-budget.js';
import { SocketPool } from './socket-pool.js';
import { totalDeadlineMsForSize } from './total-deadline.js';
import type { ResponseDecoder } from './response-decoder.js';

/** A header value must not contain these (they would end the header). */
const HEADER_BREAK = /[\r\n]/;

/** How long `close` waits for requests in flight before it cuts their connections. */
export const CLOSE_GRACE_MS = 2000;

/** One POST as a protocol client builds it. */
export interface OutgoingRequest {
  /** Path below the base URL, starting with `/`. */
  path: string;
  body: string;
  requestId: string;
  /** Sent as `X-SMG-Routing-Key` when set (shared-prefix workloads with --gsp-send-routing-key). */
  routingKey?: string;
  stream: boolean;
  decoder: ResponseDecoder;
  /** The most output tokens the request allows (`max_new_tokens`, `max_tokens`): a server claiming more is malformed. */
  maxOutputTokens?: number;
  /** The prompt's length in tokens, as the workload intends it (sizes the `'by-size'` total deadline). */
  inputTokens?: number;
  signal?: AbortSignal;
}

/**
 * The HTTP side every protocol client shares: one connection pool to the base URL (keep-alive, at most
 * `maxConnections` sockets), the deadlines, and the run's abort signal. The pool is our lean `SocketPool` for
 * `http://` (undici costs 1.28x its CPU per streamed request on the CLI's path: bench/node-cli-targets.ts, phase
 * `transport`; docs/protocols.md, Cost) and undici's
 * `Pool` for `https://` or when `httpTransport: 'undici'` is asked for.
 *
 * Deadlines: `connectMs` is the pool's connect timeout (a native timer in SocketPool; undici's ticks on a ~0.5 s
 * wheel, so there a connect deadline fires up to about a second late). The others are native timers in the exchange, precise to a millisecond:
 * `firstByteMs` counts from when the request is written to when the response headers arrive, `idleMs` is the longest
 * wait for progress (one timer per request, refreshed by each event of a stream or piece of a 2xx body), `totalMs`
 * counts from the hand-over to the pool (`'by-size'`: from the request's own lengths).
 */
export class HttpTransport {
  readonly #pool: Pool | undefined;
  readonly #socketPool: SocketPool | undefined;
  readonly #pathPrefix: string;
  readonly #clock: Clock;
  readonly #timeouts: ClientTimeouts;
  readonly #limits: ClientLimits;
  /** Bytes of answers held by all this client's requests in flight. */
  readonly #bodyBudget: BodyBudget;
  readonly #baseHeaders: string[];
  /** One abort listener per distinct signal, however many requests share it (a run shares one). */
  readonly #signalGroups = new WeakMap<AbortSignal, SignalGroup>();

  constructor(options: ProtocolClientOptions) {
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch (error) {
      throw new ServelabError('INVALID_CONFIG', `baseUrl "${options.baseUrl}" is not a URL; give one like http://127.0.0.1:30000`, {
        cause: error,
      });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new ServelabError('INVALID_CONFIG', `baseUrl "${options.baseUrl}" must start with http:// or https://`);
    }
    const maxConnections = options.maxConnections;
    const unbounded = maxConnections === undefined || maxConnections === Number.POSITIVE_INFINITY;
    if (!unbounded && (!Number.isInteger(maxConnections) || maxConnections < 1)) {
      throw new ServelabError('INVALID_CONFIG', `maxConnections must be a positive integer, got ${maxConnections}`);
    }
    this.#pathPrefix = url.pathname.replace(/\/+$/, '');
    this.#clock = options.clock;
    this.#timeouts = options.timeouts ?? {};
    this.#limits = options.limits ?? {};
    for (const name of ['maxBodyBytes', 'maxSseEventBytes'] as const) {
      const value = this.#limits[name];
      if (value !== undefined && !(Number.isInteger(value) && value >= 1 && value <= MAX_RESPONSE_CAP_BYTES)) {
        throw new ServelabError(
          'INVALID_CONFIG',
          `${name} is ${String(value)}; give a whole number of bytes from 1 to ${MAX_RESPONSE_CAP_BYTES} (${MAX_RESPONSE_CAP_BYTES / 2 ** 20} MiB): one answer is read into one string, and V8's strings end near 512 MiB`,
        );
      }
    }
    const budgetBytes = this.#limits.maxInFlightBodyBytes ?? DEFAULT_MAX_IN_FLIGHT_BODY_BYTES;
    if (!Number.isSafeInteger(budgetBytes) || budgetBytes < 1) {
      throw new ServelabError('INVALID_CONFIG', `maxInFlightBodyBytes is ${String(budgetBytes)}; give a whole number of bytes above 0`);
    }
    this.#bodyBudget = new BodyBudget(budgetBytes);
    const useSockets = options.httpTransport === 'socket' || (options.httpTransport === undefined && url.protocol === 'http:');
    if (useSockets && url.protocol !== 'http:') {
      throw new ServelabError('INVALID_CONFIG', `httpTransport "socket" speaks plain HTTP only; use "undici" for ${url.protocol}// URLs`);
    }
    if (useSockets) {
      this.#pool = undefined;
      this.#socketPool = new SocketPool(url, {
        maxConnections: unbounded ? undefined : maxConnections,
        connectTimeoutMs: this.#timeouts.connectMs ?? 0,
      });
    } else {
      this.#socketPool = undefined;
      this.#pool = new Pool(url.origin, {
        connections: unbounded ? null : maxConnections,
        pipelining: 1,
        // 0 turns an undici timer off: an absent deadline means none.
        connect: { timeout: this.#timeouts.connectMs ?? 0 },
        // undici's header and body timers tick on a ~0.5 s wheel; the exchange keeps precise ones of its own.
        headersTimeout: 0,
        bodyTimeout: 0,
      });
    }
    this.#baseHeaders = ['content-type', 'application/json'];
    if (options.apiKey !== undefined && HEADER_BREAK.test(options.apiKey)) {
      throw new ServelabError('INVALID_CONFIG', 'the API key contains a line break; check the variable it is read from');
    }
    if (options.apiKey !== undefined && options.apiKey !== '') {
      this.#baseHeaders.push('authorization', `Bearer ${options.apiKey}`);
    }
  }

  send(request: OutgoingRequest): Promise<ClientOutcome> {
    const signal = request.signal;
    const group = signal === undefined ? undefined : this.#groupFor(signal);
    if (group?.aborted === true) {
      return Promise.resolve({ success: false, error: 'aborted', errorMessage: 'the run was interrupted before the request was sent' });
    }
    if (HEADER_BREAK.test(request.requestId)) {
      return Promise.reject(new ServelabError('INVALID_CONFIG', `request id ${JSON.stringify(request.requestId)} contains a line break`));
    }
    if (request.routingKey !== undefined && HEADER_BREAK.test(request.routingKey)) {
      return Promise.reject(new ServelabError('INVALID_CONFIG', `routing key ${JSON.stringify(request.routingKey)} contains a line break`));
    }
    return new Promise<ClientOutcome>((resolve) => {
      const exchange = new HttpExchange(
        this.#clock,
        request.decoder,
        request.stream,
        resolve,
        this.#timeouts,
        { ...this.#limits, maxOutputTokens: request.maxOutputTokens },
        this.#bodyBudget,
      );
      if (group !== undefined) exchange.joinSignalGroup(group.members);
      const totalMs = this.#timeouts.totalMs;
      if (totalMs === 'by-size') exchange.startTotalDeadline(totalDeadlineMsForSize(request.inputTokens ?? 0, request.maxOutputTokens ?? 0));
      else if (totalMs !== undefined) exchange.startTotalDeadline(totalMs);
      const headers = this.#baseHeaders.slice();
      headers.push('x-request-id', request.requestId);
      if (request.routingKey !== undefined) headers.push('x-smg-routing-key', request.routingKey);
      const path = this.#pathPrefix + request.path;
      if (this.#socketPool !== undefined) {
        this.#socketPool.dispatch({ path, headers, body: request.body }, exchange);
        return;
      }
      try {
        (this.#pool as Pool).dispatch({ path, method: 'POST', headers, body: request.body, headersTimeout: 0, bodyTimeout: 0 }, exchange);
      } catch (error) {
        // undici throws synchronously only for invalid arguments or a closed pool.
        exchange.onError(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  /**
   * Closes the connections. Requests still in flight get `CLOSE_GRACE_MS` to finish; after that the pool is destroyed
   * and they settle as `network_error` (a run interrupted by a signal has already settled them as `aborted`).
   */
  async close(): Promise<void> {
    let graceTimer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace_over'>((resolve) => {
      graceTimer = setTimeout(() => resolve('grace_over'), CLOSE_GRACE_MS);
      graceTimer.unref();
    });
    const socketPool = this.#socketPool;
    const pool = this.#pool;
    const closing = socketPool !== undefined ? socketPool.close() : (pool as Pool).close();
    const result = await Promise.race([closing.then(() => 'closed' as const), graceOver]);
    clearTimeout(graceTimer);
    if (result === 'grace_over') {
      if (socketPool !== undefined) await socketPool.destroy();
      else await (pool as Pool).destroy();
    }
  }

  #groupFor(signal: AbortSignal): SignalGroup {
    let group = this.#signalGroups.get(signal);
    if (group === undefined) {
      const members = new Set<HttpExchange>();
      const created: SignalGroup = { aborted: signal.aborted, members };
      group = created;
      this.#signalGroups.set(signal, created);
      signal.addEventListener(
        'abort',
        () => {
          created.aborted = true;
          // cancel() removes each member from the set, so iterate over a copy.
          for (const member of [...members]) {
            member.cancel({ error: 'aborted', message: 'the run was interrupted while the request was in flight' });
          }
        },
        { once: true },
      );
    }
    return group;
  }
}

/**
 * The requests sharing one abort signal, and whether it fired. The flag is read per request instead of
 * `AbortSignal.aborted`: that getter saw signals of different shapes from one run to the next, and each new shape
 * threw away the optimised code of the send path mid-run (recompiling it took the client's core for milliseconds).
 */
interface SignalGroup {
  aborted: boolean;
  readonly members: Set<HttpExchange>;
}
