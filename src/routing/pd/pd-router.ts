import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { ServelabError } from '../../errors/servelab-error.js';
import type { RoutingPolicy, TapRecord, WorkerState } from '../../types/routing.js';
import { injectBootstrap, newBootstrapRoom } from './bootstrap.js';
import { eligibleWorkers } from '../policies/eligible.js';
import { forward } from '../proxy/forward.js';
import type { RoutedClientRequest } from '../router/forward-with-retries.js';
import { dispatchPdRequest } from './pd-dispatch.js';
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
}

/** What the router hands the PD handler for one request. */
export interface PdRequest extends RoutedClientRequest {
  /** Records the pair for the run's records (the router's trace); undefined when the router does not trace. */
  trace?: (host: string, hostIndex: number) => TapRecord;
}

/**
 * Routes each request to a (prefill, decode) pair, as smg's PD router: the pair from the two policies, the bootstrap
 * fields injected into the body, both legs sent at once and the decode server's answer streamed back. The servers are
 * the router's own workers (found by URL), so its health checks and circuit breaker apply to both sides. No retries
 * yet: a failed pair is answered as it failed.
 */
export class PdRouter {
  readonly settings: PdRouterSettings;
  readonly #prefillUrls: Map<string, PrefillServer>;
  readonly #decodeUrls: Set<string>;

  constructor(settings: PdRouterSettings, normalize: (url: string) => string) {
    if (settings.prefill.length === 0 || settings.decode.length === 0) {
      throw new ServelabError('INVALID_CONFIG', `PD mode needs at least one prefill and one decode server (got ${settings.prefill.length} prefill, ${settings.decode.length} decode)`);
    }
    this.settings = settings;
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
    const pair = choosePdPair(request.routingRequest, this.settings.prefillPolicy, prefillWorkers, this.settings.decodePolicy, decodeWorkers);
    if (pair === undefined) return this.#noServer(response);
    const prefill = pair.prefill as PdWorker;
    const decode = pair.decode as PdWorker;
    const prefillServer = this.#prefillUrls.get(prefill.url) as PrefillServer;
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
    // The decode server answers the client, so it is the record's `host`; the pair and room go beside it.
    const traced = request.trace?.(decode.url, decode.index);
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
    });
    for (const worker of [prefill, decode]) worker.inFlight--;
    if (traced !== undefined && outcome.statusCode !== undefined) traced.httpStatus = outcome.statusCode;
    if (outcome.failedLeg !== undefined && !outcome.clientClosed) (outcome.failedLeg === 'prefill' ? prefill : decode).errors++;
    const success = outcome.failedLeg === undefined && !outcome.clientClosed;
    this.settings.prefillPolicy.onRequestFinished?.(request.routingRequest, prefill, success);
    this.settings.decodePolicy.onRequestFinished?.(request.routingRequest, decode, success);
  }

  #noServer(response: ServerResponse): void {
    const text = JSON.stringify({ error: { type: 'no_available_workers', message: 'no healthy prefill or decode server: check GET /workers' } });
    response.writeHead(503, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    response.end(text);
  }
}
