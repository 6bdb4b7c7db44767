import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../../clock/clock.js';
import type { Clock } from '../../clock/clock.js';
import { ServelabError } from '../../errors/servelab-error.js';
import type { EngineListener, EngineRequestView } from '../../types/engine.js';
import { HARNESS_PATH, injectBusyLoopFromEnvironment, ProcessHealthMonitor, serveHarness } from '../../utils/process-health.js';
import { refuseBrowserOrigin, refuseUntrustedRequest, runControlToken } from '../../routing/router/control-auth.js';
import { controlPathKind } from '../../routing/router/control-paths.js';
import type { SimEngine } from '../core/sim-engine.js';
import { createEngine, resolveEngineSetup } from '../create-engine.js';
import { bootstrapRoomOf, missingBootstrapRoomMessage } from '../disaggregation/engine-role.js';
import { pdPhasesMeta } from '../disaggregation/pd-phases.js';
import { resolvePdSettings } from '../disaggregation/pd-settings.js';
import type { PdSettingsInput } from '../disaggregation/pd-settings.js';
import type { EngineRole } from '../disaggregation/engine-role.js';
import type { EngineSettings, ResolvedEngineSetup } from '../create-engine.js';
import { SglangMetrics } from '../metrics/sglang-metrics.js';
import { resolveSchedulingPolicy } from '../policy/load-policy.js';
import { BadRequest, isRecord, optionalCount, readJsonBody, sendJson, sendText } from './http-helpers.js';
import { chatPrompt, completionPrompt, generatePrompt } from './prompt-token-ids.js';
import { PD_KV_ARRIVED_PATH, PD_KV_DESTINATION_PATH, PdHttp } from './pd-http.js';
import type { BootstrapAddress } from './pd-http.js';
import { RealTimeStepper } from './real-time-stepper.js';
import { ServedRequest } from './served-request.js';
import type { ServedProtocol, ServedRequestContext, StreamUsageOptions } from './served-request.js';

const NO_STREAM_USAGE: StreamUsageOptions = { includeUsage: false, continuousUsage: false };

/** The engine's settings (profile, batch limits, KV capacity, policy, cache, seed) plus where and how to serve. */
export interface SimServerOptions extends EngineSettings {
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 (the default) picks any free port. */
  port?: number;
  /** The model name reported by the API; default: the profile's model. */
  servedModelName?: string;
  /** Default: the system clock. The real-time loop needs a clock that moves by itself. */
  clock?: Clock;
  /** SGLang's `--enable-cache-report` (off by default there too): OpenAI usage reports cached prompt tokens. */
  enableCacheReport?: boolean;
  /**
   * Time the server spends "starting" after it binds its port (SGLang loads weights and warms up then): `/health`
   * answers 503 until it has passed and a warmup request has run.
   */
  startupDelayMs?: number;
  /** Resolve as soon as the port is bound instead of when the server is ready (`ready` tells when). */
  returnBeforeReady?: boolean;
  /**
   * The token servelab's own endpoints (`/_servelab/harness`) require (control-auth.ts); default: this process's
   * runControlToken(), which a server servelab launched inherited from it.
   */
  controlToken?: string;
  /** PD (a prefill or decode role): the KV link, KV size and decode reservation, over the profile's figures. */
  pd?: PdSettingsInput;
}

export interface RunningSimServer {
  url: string;
  port: number;
  /** Settles when start-up is over and `/health` answers 200. */
  ready: Promise<void>;
  /** From now on `/health` answers 503, as SGLang's does during a graceful shutdown; requests still run. */
  beginShutdown(): void;
  close(): Promise<void>;
}

/** SGLang's default max_new_tokens when sampling_params leaves it out. */
const DEFAULT_MAX_NEW_TOKENS = 128;
/** The OpenAI completions API's default max_tokens. */
const DEFAULT_COMPLETION_MAX_TOKENS = 16;
const FLUSH_CACHE_MESSAGE =
  'Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting requests, the ' +
  'operation will not be performed.)\n';

/** Starts a simulated SGLang server (real HTTP on loopback, steps in real time). */
export async function startSimServer(options: SimServerOptions = {}): Promise<RunningSimServer> {
  const policy = await resolveSchedulingPolicy(options.schedulePolicy ?? 'fcfs');
  const setup = resolveEngineSetup({ ...options, schedulePolicy: policy });
  const server = new SimHttpServer(setup, options);
  const running = await server.listen(options.host ?? '127.0.0.1', options.port ?? 0, options.startupDelayMs ?? 0);
  if (options.returnBeforeReady !== true) await running.ready;
  return running;
}

class SimHttpServer {
  readonly #setup: ResolvedEngineSetup;
  readonly #clock: Clock;
  readonly #engine: SimEngine;
  readonly #stepper: RealTimeStepper;
  readonly #metrics: SglangMetrics;
  readonly #servedModelName: string;
  readonly #served = new Map<string, ServedRequest>();
  readonly #context: ServedRequestContext;
  readonly #role: EngineRole;
  /** The PD half of a prefill or decode server (its queues, link and handshake); undefined when co-located. */
  readonly #pd: PdHttp | undefined;
  #port = 0;
  #host = '127.0.0.1';
  /** SGLang's server status as its /health sees it: starting, then up, then (on shutdown) shutting down. */
  #status: 'starting' | 'up' | 'shutting-down' = 'starting';
  /**
   * What this process measures about itself for a run's harness report (HARNESS_PATH). No event-loop delay timer: it
   * would wake the loop between arrivals and change how simultaneous arrivals batch; step lateness stands in.
   */
  readonly #health = new ProcessHealthMonitor({ eventLoopDelay: false });
  #stopInjectedBusyLoop: () => void = () => undefined;
  readonly #controlToken: string;

  constructor(setup: ResolvedEngineSetup, options: SimServerOptions) {
    this.#setup = setup;
    this.#controlToken = options.controlToken ?? runControlToken();
    this.#clock = options.clock ?? systemClock;
    this.#role = options.role ?? 'colocated';
    const profile = setup.profile;
    this.#servedModelName =
      options.servedModelName ?? (profile.kind === 'roofline' ? profile.model : (profile.name ?? 'servelab-sim'));
    this.#metrics = new SglangMetrics(this.#servedModelName);
    const served = this.#served;
    const listener: EngineListener = {
      onToken: (view: EngineRequestView, timeMs: number) => {
        const request = served.get(view.id);
        if (request === undefined) return;
        if (view.outputTokens === 1 && this.#pd !== undefined) {
          const phases = this.#pd.takePhases(view);
          if (phases !== undefined) request.pdPhases = pdPhasesMeta(phases);
        }
        request.onToken(view, timeMs);
      },
      onFinish: (view: EngineRequestView, timeMs: number) => {
        const request = served.get(view.id);
        this.#pd?.forget(view.id);
        if (request === undefined) return;
        // A prefill server's request stays in flight while its KV crosses the link; it answers once the KV is there.
        if (this.#pd?.prefill?.onEngineFinish(view, timeMs, () => request.onFinish(view, timeMs)) === true) return;
        request.onFinish(view, timeMs);
      },
    };
    this.#engine = createEngine(setup, listener);
    this.#pd =
      this.#role === 'colocated'
        ? undefined
        : new PdHttp({
            role: this.#role,
            engine: this.#engine,
            clock: this.#clock,
            settings: resolvePdSettings(setup.profile, options.pd),
            controlToken: this.#controlToken,
            ownUrl: () => `http://${this.#host.includes(':') ? `[${this.#host}]` : this.#host}:${this.#port}`,
            submit: (input, nowMs) => {
              this.#engine.submit(input, nowMs);
              this.#stepper.kick();
            },
            fail: (requestId, message) => served.get(requestId)?.failTransfer(message),
            log: (message) => process.stderr.write(`sim-server: ${message}\n`),
          });
    if (this.#pd !== undefined) {
      const pd = this.#pd;
      this.#metrics.pdQueues = () => pd.queueGauges();
    }
    this.#stepper = new RealTimeStepper(
      this.#engine,
      this.#clock,
      (plan, endMs) => {
        this.#metrics.onStepCompleted(plan, this.#engine.load(), endMs, this.#engine.counters.retractions);
        this.#pd?.afterStep();
      },
      () => {
        this.#metrics.onIdle(this.#engine.load());
        this.#pd?.afterStep();
      },
    );
    this.#context = {
      clock: this.#clock,
      metrics: this.#metrics,
      seed: setup.config.seed,
      servedModelName: this.#servedModelName,
      enableCacheReport: options.enableCacheReport === true,
      onDone: (id) => served.delete(id),
    };
  }

  async listen(host: string, port: number, startupDelayMs: number): Promise<RunningSimServer> {
    const server = createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
      this.#route(request, response).catch((error: unknown) => {
        if (!response.headersSent) sendJson(response, 500, { error: { message: String(error) } });
        else response.destroy();
      });
    });
    await new Promise<void>((resolve, reject) => {
      const onError = (error: NodeJS.ErrnoException): void => {
        reject(
          error.code === 'EADDRINUSE'
            ? new ServelabError('PORT_IN_USE', `port ${port} on ${host} is in use (EADDRINUSE): pick another --port, or 0 for any free port`)
            : error,
        );
      };
      server.once('error', onError);
      server.listen(port, host, () => {
        server.off('error', onError);
        resolve();
      });
    });
    const address = server.address() as AddressInfo;
    this.#stopInjectedBusyLoop = injectBusyLoopFromEnvironment('sim-server');
    this.#port = address.port;
    this.#host = host;
    const displayHost = host.includes(':') ? `[${host}]` : host;
    // SGLang binds its port before loading weights and warming up; the simulator has nothing to load, so start-up is
    // only the configured delay (no warmup request is run: it would show in the counters and the prefix cache).
    const ready = new Promise<void>((resolve) => {
      const markUp = (): void => {
        if (this.#status === 'starting') this.#status = 'up';
        resolve();
      };
      if (startupDelayMs > 0) setTimeout(markUp, startupDelayMs).unref();
      else markUp();
    });
    return {
      ready,
      beginShutdown: () => {
        this.#status = 'shutting-down';
      },
      url: `http://${displayHost}:${address.port}`,
      port: address.port,
      close: async () => {
        this.#status = 'shutting-down';
        this.#stepper.close();
        this.#pd?.close();
        this.#stopInjectedBusyLoop();
        this.#health.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }

  async #route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    const method = request.method ?? 'GET';
    // Control endpoints, recognised however the path is spelled (control-paths.ts): servelab's need the run's token;
    // SGLang's admin endpoints (which SGLang itself leaves open) refuse a browser page, whose cross-site request
    // would otherwise flush the cache in the middle of a measurement.
    const kind = controlPathKind(request.url ?? '/');
    if (kind !== 'open') {
      const refusal =
        kind === 'servelab' ? refuseUntrustedRequest(request, { token: this.#controlToken, listenHost: this.#host, port: this.#port }) : refuseBrowserOrigin(request);
      if (refusal !== undefined) return sendJson(response, refusal.status, { error: { message: refusal.message } });
    }
    switch (path) {
      case '/generate':
        return this.#handleGenerate(request, response);
      case '/v1/completions':
        return this.#handleOpenAi(request, response, 'completions');
      case '/v1/chat/completions':
        return this.#handleOpenAi(request, response, 'chat');
      case '/health':
      case '/health_generate':
        // 503 while starting and while shutting down (SGLang's gracefully_exit / ServerStatus.Starting).
        if (this.#status !== 'up') return sendText(response, 503, '');
        return path === '/health' ? sendText(response, 200, '') : this.#handleHealthGenerate(response);
      case '/server_info':
      case '/get_server_info':
        return sendJson(response, 200, this.#serverInfo());
      case '/model_info':
      case '/get_model_info':
        return sendJson(response, 200, this.#modelInfo());
      case '/v1/models':
        return sendJson(response, 200, {
          object: 'list',
          data: [
            {
              id: this.#servedModelName,
              object: 'model',
              created: Math.floor(this.#clock.nowEpochSeconds()),
              owned_by: 'sglang',
              root: this.#servedModelName,
              max_model_len: this.#setup.config.contextLength,
            },
          ],
        });
      case '/flush_cache':
        if (method !== 'POST' && method !== 'GET') return sendJson(response, 405, { detail: 'Method Not Allowed' });
        return this.#handleFlushCache(request, response);
      case '/metrics':
        return sendText(response, 200, this.#metrics.render(), 'text/plain; version=0.0.4');
      case PD_KV_DESTINATION_PATH:
      case PD_KV_ARRIVED_PATH:
        return this.#handlePdMessage(request, response, path);
      case '/get_load':
        return sendJson(response, 200, this.#getLoad());
      case '/v1/loads':
        return sendJson(response, 200, this.#v1Loads());
      case HARNESS_PATH:
        return serveHarness(this.#health, request, response, {
          onReset: () => this.#stepper.lateness.reset(),
          extra: () => {
            const lateness = this.#stepper.lateness.snapshot();
            const max = Math.round(lateness.maxMs * 1000) / 1000;
            return { step_lateness_ms: { p50: lateness.p50Ms, p99: lateness.p99Ms, max, steps: lateness.steps } };
          },
        });
      default:
        return sendJson(response, 404, { detail: 'Not Found' });
    }
  }

  #newRequestId(request: IncomingMessage, bodyRid: unknown): string {
    if (typeof bodyRid === 'string' && bodyRid !== '') return bodyRid;
    const header = request.headers['x-request-id'];
    if (typeof header === 'string' && header !== '') return header;
    return randomBytes(16).toString('hex');
  }

  async #handleGenerate(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.method !== 'POST' && request.method !== 'PUT') {
      return sendJson(response, 405, { detail: 'Method Not Allowed' });
    }
    let body: Record<string, unknown>;
    let promptTokenIds: ArrayLike<number>;
    let maxNewTokens: number;
    try {
      const parsed = await readJsonBody(request);
      if (!isRecord(parsed)) throw new BadRequest('The request body must be a JSON object.');
      body = parsed;
      promptTokenIds = generatePrompt(body);
      const sampling = body['sampling_params'] ?? {};
      if (!isRecord(sampling)) throw new BadRequest('sampling_params must be an object.');
      maxNewTokens = optionalCount(sampling['max_new_tokens'], 'max_new_tokens') ?? DEFAULT_MAX_NEW_TOKENS;
      if (body['stream'] !== undefined && typeof body['stream'] !== 'boolean') {
        throw new BadRequest('stream must be a boolean.');
      }
    } catch (error) {
      return sendJson(response, 400, { error: { message: errorMessage(error) } });
    }
    const id = this.#newRequestId(request, body['rid']);
    if (this.#refusesWithoutRoom(body)) return sendJson(response, 400, { error: { message: missingBootstrapRoomMessage(id) } });
    const badBootstrap = this.#badBootstrap(body);
    if (badBootstrap !== undefined) return sendJson(response, 400, { error: { message: badBootstrap } });
    const stream = body['stream'] === true;
    this.#admit(request, response, id, promptTokenIds, maxNewTokens, 'generate', stream, NO_STREAM_USAGE, body);
  }

  async #handleOpenAi(request: IncomingMessage, response: ServerResponse, protocol: 'completions' | 'chat'): Promise<void> {
    if (request.method !== 'POST') return sendJson(response, 405, { detail: 'Method Not Allowed' });
    let body: Record<string, unknown>;
    let promptTokenIds: ArrayLike<number>;
    let maxNewTokens: number;
    let includeUsage = false;
    let continuousUsage = false;
    try {
      const parsed = await readJsonBody(request);
      if (!isRecord(parsed)) throw new BadRequest('The request body must be a JSON object.');
      body = parsed;
      promptTokenIds = protocol === 'completions' ? completionPrompt(body) : chatPrompt(body);
      const maxTokens =
        optionalCount(body['max_completion_tokens'], 'max_completion_tokens') ??
        optionalCount(body['max_tokens'], 'max_tokens');
      maxNewTokens = maxTokens ?? (protocol === 'completions' ? DEFAULT_COMPLETION_MAX_TOKENS : DEFAULT_MAX_NEW_TOKENS);
      const streamOptions = body['stream_options'];
      if (isRecord(streamOptions)) {
        includeUsage = streamOptions['include_usage'] === true;
        continuousUsage = streamOptions['continuous_usage_stats'] === true;
      }
    } catch (error) {
      return sendJson(response, 400, openAiError(errorMessage(error)));
    }
    const id = this.#newRequestId(request, body['rid']);
    if (this.#refusesWithoutRoom(body)) return sendJson(response, 400, openAiError(missingBootstrapRoomMessage(id)));
    const badBootstrap = this.#badBootstrap(body);
    if (badBootstrap !== undefined) return sendJson(response, 400, openAiError(badBootstrap));
    const stream = body['stream'] === true;
    this.#admit(request, response, id, promptTokenIds, maxNewTokens, protocol, stream, { includeUsage, continuousUsage }, body);
  }

  /**
   * A decode server must reach the request's prefill server: the simulated prefill server serves its bootstrap
   * endpoint on its HTTP port, so bootstrap_host and bootstrap_port must name that port. Undefined when usable.
   */
  #badBootstrap(body: Record<string, unknown>): string | undefined {
    if (this.#role !== 'decode') return undefined;
    return bootstrapAddressOf(body) === undefined
      ? 'bootstrap_host and bootstrap_port must name the prefill server: the simulated prefill server serves its bootstrap endpoint on its HTTP port, so give the router --prefill URL,PORT with that port'
      : undefined;
  }

  /** The PD handshake between simulated servers (pd-http.ts): JSON in, 200 `{}` or 400 with the reason. */
  async #handlePdMessage(request: IncomingMessage, response: ServerResponse, path: string): Promise<void> {
    if (request.method !== 'POST') return sendJson(response, 405, { detail: 'Method Not Allowed' });
    if (this.#pd === undefined) return sendJson(response, 400, { error: { message: 'this server is co-located: it takes no PD messages' } });
    let body: unknown;
    try {
      body = await readJsonBody(request);
    } catch (error) {
      return sendJson(response, 400, { error: { message: errorMessage(error) } });
    }
    if (!isRecord(body)) return sendJson(response, 400, { error: { message: 'The request body must be a JSON object.' } });
    const problem = path === PD_KV_DESTINATION_PATH ? this.#pd.onKvDestination(body) : this.#pd.onKvArrived(body);
    if (problem !== undefined) return sendJson(response, 400, { error: { message: problem } });
    sendJson(response, 200, {});
  }

  /** A prefill or decode server refuses a request that carries no bootstrap room, as SGLang's scheduler does. */
  #refusesWithoutRoom(body: Record<string, unknown>): boolean {
    return this.#role !== 'colocated' && bootstrapRoomOf(body) === undefined;
  }

  #admit(
    request: IncomingMessage,
    response: ServerResponse,
    id: string,
    promptTokenIds: ArrayLike<number>,
    maxNewTokens: number,
    protocol: ServedProtocol,
    stream: boolean,
    usageOptions: StreamUsageOptions,
    body: Record<string, unknown>,
  ): void {
    // A prefill server computes the prompt's KV and its first token, then hands the request to the decode server: it
    // never decodes (SGLang's process_batch_result_disagg_prefill appends the first token and moves the request to
    // the in-flight KV transfer queue, python/sglang/srt/disaggregation/prefill.py); its answer waits for the transfer.
    const input = { id, promptTokenIds, maxNewTokens: this.#role === 'prefill' ? Math.min(maxNewTokens, 1) : maxNewTokens };
    const invalid =
      this.#served.has(id) ? `Duplicate request ID ${id}: every request needs a unique rid.` : this.#engine.validate(input);
    if (invalid !== null) {
      sendJson(response, 400, protocol === 'generate' ? { error: { message: invalid } } : openAiError(invalid));
      return;
    }
    const served = new ServedRequest(id, protocol, stream, usageOptions, response, this.#context);
    this.#served.set(id, served);
    served.startStream();
    response.on('close', () => {
      if (served.done) return;
      served.markClientGone();
      // Not in the engine yet (a PD request still in its bootstrap, prealloc or transfer queue): out of those queues,
      // and its rid is free again (a router retrying the request on this server sends the same rid).
      if (!this.#engine.abort(id, this.#clock.nowMs()) && this.#pd !== undefined) {
        this.#pd.cancel(id);
        this.#served.delete(id);
      }
    });
    void request;
    if (this.#pd !== undefined) {
      this.#pd.arrive(String(bootstrapRoomOf(body)), input, bootstrapAddressOf(body));
      return;
    }
    this.#engine.submit(input, this.#clock.nowMs());
    this.#stepper.kick();
  }

  /**
   * SGLang flushes only when no request is waiting or running; `?timeout=S` (newer SGLang) waits up to S seconds for
   * the engine to go idle first.
   */
  async #handleFlushCache(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const timeoutSeconds = Number(new URL(request.url ?? '/', 'http://sim').searchParams.get('timeout') ?? 0);
    const deadlineMs = this.#clock.nowMs() + (Number.isFinite(timeoutSeconds) && timeoutSeconds > 0 ? timeoutSeconds * 1000 : 0);
    while (!this.#engine.isIdle && this.#clock.nowMs() < deadlineMs) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    if (this.#engine.flushCache()) return sendText(response, 200, FLUSH_CACHE_MESSAGE);
    const load = this.#engine.load();
    sendText(
      response,
      400,
      `Cache not flushed because there are pending requests. #queue-req: ${load.waitingRequests}, ` +
        `#running-req: ${load.runningRequests}\n`,
    );
  }

  #handleHealthGenerate(response: ServerResponse): void {
    const id = `HEALTH_CHECK_${randomBytes(8).toString('hex')}`;
    const served = new ServedRequest(id, 'health', false, NO_STREAM_USAGE, null, this.#context, () => sendText(response, 200, ''));
    this.#served.set(id, served);
    this.#engine.submit({ id, promptTokenIds: [1], maxNewTokens: 1 }, this.#clock.nowMs());
    this.#stepper.kick();
  }

  #serverInfo(): Record<string, unknown> {
    const config = this.#setup.config;
    const profile = this.#setup.profile;
    const load = this.#engine.load();
    return {
      model_path: profile.kind === 'roofline' ? profile.model : this.#servedModelName,
      tokenizer_path: profile.kind === 'roofline' ? profile.model : this.#servedModelName,
      served_model_name: this.#servedModelName,
      host: this.#host,
      port: this.#port,
      max_running_requests: config.maxRunningRequests,
      max_total_tokens: config.maxTotalTokens,
      chunked_prefill_size: config.chunkedPrefillSize,
      context_length: config.contextLength,
      schedule_policy: config.schedulePolicy,
      schedule_conservativeness: config.scheduleConservativeness,
      disable_radix_cache: config.disableRadixCache,
      enable_mixed_chunk: config.enableMixedChunk,
      enable_metrics: true,
      page_size: config.pageSize,
      tp_size: 1,
      dp_size: 1,
      random_seed: config.seed,
      version: 'servelab-sim',
      simulated: true,
      profile: profile.kind === 'roofline' ? profile.name : (profile.name ?? 'simple'),
      // The pool as SGLang sizes it: whole pages.
      max_total_num_tokens: this.#engine.kvCapacityTokens,
      max_req_input_len: this.#engine.maxRequestInputTokens,
      // Not an SGLang key: how late the real-time driver completed steps against the cost model's timeline.
      servelab_step_lateness_ms: this.#stepper.lateness.snapshot(),
      internal_states: [
        {
          max_total_num_tokens: this.#engine.kvCapacityTokens,
          num_running_reqs: load.runningRequests,
          num_waiting_reqs: load.waitingRequests,
          token_usage: load.tokenUsage,
          last_gen_throughput: 0,
        },
      ],
    };
  }

  #modelInfo(): Record<string, unknown> {
    const profile = this.#setup.profile;
    return {
      model_path: profile.kind === 'roofline' ? profile.model : this.#servedModelName,
      tokenizer_path: profile.kind === 'roofline' ? profile.model : this.#servedModelName,
      is_generation: true,
      preferred_sampling_params: null,
      weight_version: 'default',
      has_image_understanding: false,
      has_audio_understanding: false,
      model_type: 'servelab-sim',
      architectures: ['ServelabSimulatedForCausalLM'],
    };
  }

  /**
   * SGLang's deprecated `/get_load`: one entry per data-parallel rank (a single rank here). `num_reqs` counts running
   * and waiting requests together, and `num_tokens` is KV tokens in use plus the waiting prompts' tokens.
   */
  #getLoad(): Record<string, unknown>[] {
    const load = this.#engine.load();
    return [
      {
        dp_rank: 0,
        num_reqs: load.runningRequests + load.waitingRequests,
        num_waiting_reqs: load.waitingRequests,
        num_tokens: load.usedTokens + load.waitingTokens,
      },
    ];
  }

  /**
   * SGLang's `/v1/loads` (load_snapshot.py): `{timestamp, version, loads: [...]}`, one core entry per rank. Throughput
   * and hit rate are the last logged values, as SGLang's scheduler publishes them; `utilization` is always 0 there too.
   */
  #v1Loads(): Record<string, unknown> {
    const load = this.#engine.load();
    const rates = this.#metrics.loggedRates;
    return {
      timestamp: new Date(this.#clock.nowEpochSeconds() * 1000).toISOString(),
      version: 'servelab-sim',
      loads: [
        {
          dp_rank: 0,
          num_running_reqs: load.runningRequests,
          num_waiting_reqs: load.waitingRequests,
          num_waiting_uncached_tokens: load.waitingUncachedTokens,
          num_used_tokens: load.usedTokens,
          num_total_tokens: load.usedTokens + load.waitingTokens,
          max_total_num_tokens: load.maxTotalTokens,
          max_running_requests: this.#setup.config.maxRunningRequests,
          token_usage: Math.round(load.tokenUsage * 10_000) / 10_000,
          gen_throughput: Math.round(rates.genThroughput * 100) / 100,
          cache_hit_rate: Math.round(rates.cacheHitRate * 10_000) / 10_000,
          utilization: 0,
        },
      ],
    };
  }
}

/** The prefill server's address a PD request carries (bootstrap_host, bootstrap_port), if both are usable. */
function bootstrapAddressOf(body: Record<string, unknown>): BootstrapAddress | undefined {
  const host = body['bootstrap_host'];
  const port = body['bootstrap_port'];
  if (typeof host !== 'string' || host === '' || typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) return undefined;
  return { host, port };
}

function errorMessage(error: unknown): string {
  if (error instanceof BadRequest) return error.message;
  return error instanceof Error ? error.message : String(error);
}

function openAiError(message: string): Record<string, unknown> {
  return { object: 'error', message, type: 'BadRequestError', param: null, code: 400 };
}
