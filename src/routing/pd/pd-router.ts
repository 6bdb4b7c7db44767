import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { ServelabError } from '../../errors/servelab-error.js';
import type { RoutingPolicy, TapRecord, WorkerState } from '../../types/routing.js';
import { injectBootstrap, newBootstrapRoom } from './bootstrap.js';
import { eligibleWorkers } from '../policies/eligible.js';
import { forward } from '../proxy/forward.js';
import { RETRIES_HEADER, type RoutedClientRequest } from '../router/forward-with-retries.js';
import { dispatchPdRequest, relayPdFailure } from './pd-dispatch.js';
import { choosePdPair } from './pd-pair.js';

/** A prefill server as smg takes it (`--prefill URL [BOOTSTRAP_PORT|none]`). */
export interface PrefillServer {
  url: string;
  /** Its `--disaggregation-bootstrap-port` (SGLang's default 8998), or null for `none`. */
  bootstrapPort: number | null;
}

/** SGLang's default `--disaggregation-bootstrap-port`. */
export const DEFAULT_BOOTSTRAP_PORT = 8998;

/** The builtin router's PD mode: which servers prefill, which decode, and a policy for each side. */
export interface PdRouterSettings {
  prefill: readonly PrefillServer[];
  decode: readonly string[];
  prefillPolicy: RoutingPolicy;
  decodePolicy: RoutingPolicy;
}

/** A worker the router knows, as the PD handler needs it: the router's own objects (health, in-flight counts). */
export interface PdWorker extends WorkerState {
  inFlight: number;
  requests: number;
  errors: number;
  /** Attempts that failed on this worker and were retried on another pair. */
  retries: number;
  /** Failed attempts in a row; `breakerOpen` once they reach the router's breaker threshold (router-worker.ts). */
  consecutiveRequestFailures: number;
  breakerOpen: boolean;
}

/** How the builtin router retries a PD request whose attempt failed before the client got anything. */
export interface PdRetrySettings {
  /** Retries after the first attempt (the router's `maxRetries`). */
  maxRetries: number;
  /** Failed attempts in a row that open a worker's breaker; 0 never opens it. */
  breakerFailures: number;
  log?: (line: string) => void;
}

/**
 * The statuses smg retries a PD attempt on (`is_retryable_status` in model_gateway/src/core/retry.rs: 408, 429, 500,
 * 502, 503, 504); a leg that gave no answer counts as 502, as smg answers it (`bad_gateway`, pd_router.rs).
 */
const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);

export function isRetryablePdStatus(status: number | undefined): boolean {
  return RETRYABLE_STATUSES.has(status ?? 502);
}

/**
 * The wait before retry `retry` (1 for the first): smg's default backoff (`RetryConfig::default`, config/types.rs:
 * 50 ms initial, ×1.5 each time, at most 30 s), without its ±20% jitter. The wait matters in PD: the cancelled leg of
 * the failed attempt is still being torn down on its server, and the retry carries the same rid, which a server still
 * holding it refuses as a duplicate.
 */
export function pdRetryBackoffMs(retry: number): number {
  return Math.min(50 * 1.5 ** (retry - 1), 30_000);
}

/** What the router hands the PD handler for one request. */
export interface PdRequest extends RoutedClientRequest {
  /** Records the pair for the run's records (the router's trace); undefined when the router does not trace. */
  trace?: (host: string, hostIndex: number) => TapRecord;
}

/**
 * Routes each request to a (prefill, decode) pair, as smg's PD router: the pair from the two policies, the bootstrap
 * fields injected into the body, both legs sent at once and the decode server's answer streamed back. The servers are
 * the router's own workers (found by URL), so its health checks and circuit breaker apply to both sides.
 *
 * Retries follow smg's (`execute_dual_dispatch` runs each attempt through `RetryExecutor::execute_response_with_retry`,
 * model_gateway/src/routers/http/pd_router.rs and core/retry.rs): an attempt that failed with a retryable status, or a
 * leg that gave no answer, is tried again on a pair the policies pick anew, with a new bootstrap room, up to
 * `maxRetries` times, after smg's backoff (pdRetryBackoffMs); an answer that already reached the client is never
 * retried. As the builtin router does for a single worker, and unlike smg, the failed leg's server is left out of the
 * next picks for this request (smg's policies may pick it again until its breaker opens).
 */
export class PdRouter {
  readonly settings: PdRouterSettings;
  readonly #prefillUrls: Map<string, PrefillServer>;
  readonly #decodeUrls: Set<string>;
  readonly #retry: PdRetrySettings;

  constructor(settings: PdRouterSettings, normalize: (url: string) => string, retry: PdRetrySettings = { maxRetries: 0, breakerFailures: 0 }) {
    if (settings.prefill.length === 0 || settings.decode.length === 0) {
      throw new ServelabError('INVALID_CONFIG', `PD mode needs at least one prefill and one decode server (got ${settings.prefill.length} prefill, ${settings.decode.length} decode)`);
    }
    this.settings = settings;
    this.#retry = retry;
    this.#prefillUrls = new Map(settings.prefill.map((server) => [normalize(server.url), server]));
    this.#decodeUrls = new Set(settings.decode.map(normalize));
  }

  /** Every server of both sides, for the router's worker list (health checks, /workers, /readiness). */
  get allUrls(): string[] {
    return [...this.#prefillUrls.keys(), ...this.#decodeUrls];
  }

  async handle(request: PdRequest, workers: readonly PdWorker[], dispatcher: Dispatcher): Promise<void> {
    const { response } = request;
    const prefillWorkers = workers.filter((worker) => this.#prefillUrls.has(worker.url));
    if (request.body === null) {
      // A request without a body (GET /v1/models, /get_model_info, ...) is no generation: smg sends it to the first
      // prefill server (proxy_to_first_prefill_worker in pd_router.rs); here, the first eligible one.
      const first = eligibleWorkers(prefillWorkers)[0];
      if (first === undefined) return this.#noServer(response);
      await forward({ dispatcher, origin: first.url, method: request.method, path: request.incoming.url ?? '/', headers: request.headers, body: null, response });
      return;
    }
    const decodeWorkers = workers.filter((worker) => this.#decodeUrls.has(worker.url));
    const tried = { prefill: new Set<PdWorker>(), decode: new Set<PdWorker>() };
    let retries = 0;
    let traced: TapRecord | undefined;
    let last: { leg: 'prefill' | 'decode'; status: number | undefined; body: string | undefined; message: string } | undefined;
    for (;;) {
      const pair = choosePdPair(
        request.routingRequest,
        this.settings.prefillPolicy,
        prefillWorkers.filter((worker) => !tried.prefill.has(worker)),
        this.settings.decodePolicy,
        decodeWorkers.filter((worker) => !tried.decode.has(worker)),
      );
      if (pair === undefined) {
        if (last === undefined) return this.#noServer(response);
        // Every server left on the failing side was tried: the client gets the last attempt's failure.
        const status = relayPdFailure(response, last.leg, { status: last.status, body: last.body }, last.message, { [RETRIES_HEADER]: String(retries) });
        if (traced !== undefined) traced.httpStatus = status;
        return;
      }
      const prefill = pair.prefill as PdWorker;
      const decode = pair.decode as PdWorker;
      const prefillServer = this.#prefillUrls.get(prefill.url) as PrefillServer;
      // A new room for every attempt, as smg injects one per attempt: the failed attempt's room may still be known.
      const room = newBootstrapRoom();
      let body: string;
      try {
        body = injectBootstrap(request.body?.toString('utf8') ?? '', { host: new URL(prefill.url).hostname, port: prefillServer.bootstrapPort }, room);
      } catch (error) {
        const text = JSON.stringify({ error: { type: 'bad_request', message: (error as Error).message } });
        response.writeHead(400, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        response.end(text);
        return;
      }
      // The decode server answers the client, so it is the record's `host`; the pair and room go beside it. One trace
      // record per attempt: the run counts the earlier ones as the request's retries.
      traced = request.trace?.(decode.url, decode.index);
      if (traced !== undefined) {
        traced.prefillHost = prefill.url;
        traced.decodeHost = decode.url;
        traced.bootstrapRoom = room.toString();
      }
      for (const worker of [prefill, decode]) {
        worker.inFlight++;
        worker.requests++;
      }
      const outcome = await dispatchPdRequest({
        dispatcher,
        prefillOrigin: prefill.url,
        decodeOrigin: decode.url,
        method: request.method,
        path: request.incoming.url ?? '/',
        headers: request.headers,
        body,
        response,
        relayFailures: false,
        extraResponseHeaders: { [RETRIES_HEADER]: String(retries) },
      });
      for (const worker of [prefill, decode]) worker.inFlight--;
      if (traced !== undefined && outcome.statusCode !== undefined) traced.httpStatus = outcome.statusCode;
      const success = outcome.failedLeg === undefined && !outcome.clientClosed;
      this.settings.prefillPolicy.onRequestFinished?.(request.routingRequest, prefill, success);
      this.settings.decodePolicy.onRequestFinished?.(request.routingRequest, decode, success);
      if (success) {
        prefill.consecutiveRequestFailures = 0;
        decode.consecutiveRequestFailures = 0;
        return;
      }
      if (outcome.failedLeg === undefined || outcome.clientClosed) return;
      const failed = outcome.failedLeg === 'prefill' ? prefill : decode;
      this.#countFailure(failed, outcome.failedLeg);
      const unanswered = outcome.unanswered;
      // Failed after the client's answer started: its stream was cut, and nothing can be sent again.
      if (unanswered === undefined) return;
      last = { leg: outcome.failedLeg, status: unanswered.status, body: unanswered.body, message: outcome.error ?? `${outcome.failedLeg} server failed` };
      if (retries < this.#retry.maxRetries && isRetryablePdStatus(unanswered.status)) {
        failed.retries++;
        retries++;
        tried[outcome.failedLeg].add(failed);
        await new Promise((resolve) => setTimeout(resolve, pdRetryBackoffMs(retries)));
        if (response.destroyed) return;
        continue;
      }
      const status = relayPdFailure(response, last.leg, { status: last.status, body: last.body }, last.message, { [RETRIES_HEADER]: String(retries) });
      if (traced !== undefined) traced.httpStatus = status;
      return;
    }
  }

  /** One failed attempt on `worker`: its error count and, as on the router's single-worker path, its breaker. */
  #countFailure(worker: PdWorker, leg: 'prefill' | 'decode'): void {
    worker.errors++;
    worker.consecutiveRequestFailures++;
    const threshold = this.#retry.breakerFailures;
    if (threshold > 0 && worker.consecutiveRequestFailures >= threshold && !worker.breakerOpen) {
      worker.breakerOpen = true;
      this.#retry.log?.(`${leg} worker ${worker.index} ${worker.url} takes no requests until a health check passes: ${worker.consecutiveRequestFailures} attempts in a row failed`);
    }
  }

  #noServer(response: ServerResponse): void {
    const text = JSON.stringify({ error: { type: 'no_available_workers', message: 'no healthy prefill or decode server: check GET /workers' } });
    response.writeHead(503, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    response.end(text);
  }
}
