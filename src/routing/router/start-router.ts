import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import type { Clock } from '../../clock/clock.js';
import { ServelabError } from '../../errors/servelab-error.js';
import type { RoutingPolicy, RoutingRequest } from '../../types/routing.js';
import { UPSTREAM_AGENT_OPTIONS } from '../proxy/forward.js';
import { forwardedRequestHeaders, rawHeaderValue } from '../proxy/hop-by-hop.js';
import { DEFAULT_MAX_REQUEST_BODY_BYTES, readBody, RequestBodyTooLarge, refuseLargeBody } from '../proxy/read-body.js';
import { requestIdFromBody, routingKeyFromBody } from '../routing-key.js';
import { CONTROL_TOKEN_HEADER, refuseControlRequest, refuseUntrustedRequest } from './control-auth.js';
import { handleControlRequest, isControlPath } from './control-endpoints.js';
import { controlPathKind, normalizeRequestPath } from './control-paths.js';
import { forwardWithRetries } from './forward-with-retries.js';
import type { RouterCounters } from './prometheus-text.js';
import { normalizeWorkerUrl, type WorkerSnapshot } from './router-worker.js';
import { sendJson } from './send-json.js';
import { WorkerMonitor } from './worker-monitor.js';
import { WorkerRegistry } from './worker-registry.js';
import { PdRouter, type PdRouterSettings } from '../pd/pd-router.js';
import { RouterTrace } from './router-trace.js';
import { TAP_RECORDS_PATH } from '../tap/start-taps.js';
import { injectBusyLoopFromEnvironment, ProcessHealthMonitor } from '../../utils/process-health.js';

export { RETRIES_HEADER } from './forward-with-retries.js';

/**
 * Retries after the first attempt. sglang-router's `max_retries` (5) counts attempts, the first included, so 4
 * retries give the same 5 attempts.
 */
export const DEFAULT_MAX_RETRIES = 4;

export interface RouterOptions {
  workerUrls: readonly string[];
  /** A policy object (see `loadRoutingPolicy` to get one from a name or module path). */
  policy: RoutingPolicy;
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Retries on other workers when a worker cannot be reached or drops the request before answering. */
  maxRetries?: number;
  healthCheckIntervalMs?: number;
  healthCheckTimeoutMs?: number;
  /** Consecutive failed health checks before a worker that was healthy stops taking requests (default 2). */
  healthFailureThreshold?: number;
  /** Interval of `/get_load` polls, when the policy uses polled load (default 1000 ms). */
  loadPollIntervalMs?: number;
  /**
   * Consecutive failed attempts on one worker (no answer) after which it takes no requests until a health check
   * passes again (default 3; 0 turns the breaker off).
   */
  circuitBreakerFailures?: number;
  /**
   * The per-run token the control endpoints require (control-auth.ts); undefined closes them. Never logged or printed.
   */
  controlToken?: string;
  /** Told about worker changes (health, circuit breaker, added, removed): one line each, for the router's log. */
  log?: (line: string) => void;
  /**
   * Traces every forwarded attempt (router-trace.ts), served at the taps' records path, on this clock's epoch
   * readings. Off when absent: a router started by hand keeps nothing per request.
   */
  traceClock?: Clock;
  /** The largest request body the router reads (default 64 MiB); a larger one is answered 413 and never read further. */
  maxRequestBodyBytes?: number;
  /**
   * Prefill/decode disaggregation: each request goes to a (prefill, decode) pair (src/routing/pd/pd-router.ts). Both
   * sides' servers join the worker list (health checks, /workers); `policy` is then unused for routing.
   */
  pd?: PdRouterSettings;
}

export interface RouterHandle {
  /** `http://host:port` */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly policy: RoutingPolicy;
  workers(): WorkerSnapshot[];
  /** Adds a worker and checks its health once before it takes requests. */
  addWorker(url: string): Promise<WorkerSnapshot>;
  /** Removes a worker by id or URL: it takes no new requests, those in flight finish. Undefined when unknown. */
  removeWorker(idOrUrl: number | string): WorkerSnapshot | undefined;
  /** Runs one round of health checks now (tests and orchestration use it instead of waiting for the interval). */
  checkHealthNow(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts servelab's builtin router: an HTTP server that proxies every request to a worker the policy picks, streaming
 * the answer through unchanged, with health checks, run-time worker changes, retries and Prometheus metrics.
 *
 * Control paths (not proxied): `GET /health` (the router is up), `GET /readiness` (200 once a worker is healthy),
 * `GET /workers`, `POST /workers {"url"}`, `DELETE /workers/{id or URL-encoded url}`, `GET /metrics`, and
 * `POST /flush_cache` (sent to every worker). Also sglang-router's older `POST /add_worker?url=` and
 * `POST /remove_worker?url=`.
 */
export async function startRouter(options: RouterOptions): Promise<RouterHandle> {
  const host = options.host ?? '127.0.0.1';
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  const breakerFailures = options.circuitBreakerFailures ?? 3;
  const policy = options.policy;
  const pdRouter = options.pd === undefined ? undefined : new PdRouter(options.pd, normalizeWorkerUrl, { maxRetries, breakerFailures, ...(options.log === undefined ? {} : { log: options.log }) });
  const needsRoutingKey = policy.needsRoutingKey || options.pd?.prefillPolicy.needsRoutingKey === true || options.pd?.decodePolicy.needsRoutingKey === true;
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw new ServelabError('INVALID_CONFIG', `maxRetries must be a whole number ≥ 0, got ${maxRetries}`);
  }
  const dispatcher = new Agent(UPSTREAM_AGENT_OPTIONS);
  const trace = options.traceClock === undefined ? undefined : new RouterTrace(options.traceClock);
  const registry = new WorkerRegistry(policy, options.log);
  const active = registry.workers;
  const counters: RouterCounters = { received: 0, failed: 0 };
  const maxRequestBodyBytes = options.maxRequestBodyBytes ?? DEFAULT_MAX_REQUEST_BODY_BYTES;
  // What this router measures about itself (event-loop delay, CPU) for a run's harness report, at HARNESS_PATH.
  const health = new ProcessHealthMonitor();
  const monitor = new WorkerMonitor(
    {
      dispatcher,
      healthCheckIntervalMs: options.healthCheckIntervalMs ?? 1_000,
      healthCheckTimeoutMs: options.healthCheckTimeoutMs ?? 2_000,
      healthFailureThreshold: options.healthFailureThreshold ?? 2,
      ...(options.log === undefined ? {} : { log: options.log }),
      ...(policy.usesPolledLoad === true ? { loadPollIntervalMs: options.loadPollIntervalMs ?? 1_000 } : {}),
    },
    () => active,
  );

  for (const url of [...options.workerUrls, ...(pdRouter?.allUrls ?? [])]) {
    try {
      registry.add(url);
    } catch (error) {
      throw new ServelabError('INVALID_CONFIG', `bad worker URL "${url}": ${(error as Error).message}`);
    }
  }

  const controlContext = { registry, monitor, counters, dispatcher, health };
  const retryContext = { policy, workers: active, dispatcher, counters, maxRetries, breakerFailures, trace, log: options.log };

  const proxy = async (incoming: IncomingMessage, response: ServerResponse, guarded: boolean): Promise<void> => {
    counters.received++;
    const method = incoming.method ?? 'GET';
    let body: Buffer | null = null;
    if (method !== 'GET' && method !== 'HEAD') {
      try {
        body = await readBody(incoming, maxRequestBodyBytes);
      } catch (error) {
        if (!(error instanceof RequestBodyTooLarge)) throw error;
        counters.failed++;
        refuseLargeBody(response, error, 'servelab router');
        return;
      }
    }
    // The control token of a guarded request is for this router: a worker (or whatever stands at its address) never
    // sees it. Open requests (the hot path) are forwarded as they came.
    const forwarded = forwardedRequestHeaders(incoming.rawHeaders);
    const headers = guarded ? withoutHeader(forwarded, CONTROL_TOKEN_HEADER) : forwarded;
    let requestId = rawHeaderValue(incoming.rawHeaders, 'x-request-id');
    let routingKey = '';
    // The body is parsed only when the policy needs its text (the rid comes for free then), or when tracing needs the
    // rid and the body carries one.
    const needsRid = trace !== undefined && requestId === undefined && body !== null && body.includes('"rid"');
    if ((needsRoutingKey || needsRid) && body !== null && body.length > 0) {
      try {
        const parsed: unknown = JSON.parse(body.toString('utf8'));
        if (needsRoutingKey) routingKey = routingKeyFromBody(parsed);
        if (requestId === undefined) {
          requestId = requestIdFromBody(parsed);
          if (requestId !== undefined) headers.push('x-request-id', requestId);
        }
      } catch {
        // Not JSON: route it with an empty key; the worker will answer the client's mistake itself.
      }
    }
    const routingRequest: RoutingRequest = { requestId: requestId ?? '', routingKey, headers: stringHeaders(incoming.headers) };
    if (pdRouter !== undefined) {
      const tracedId = requestId;
      const pdTrace = trace === undefined || tracedId === undefined ? {} : { trace: (url: string, index: number) => trace.record(tracedId, url, index) };
      await pdRouter.handle({ incoming, response, method, body, headers, routingRequest, ...pdTrace }, active, dispatcher);
      return;
    }
    await forwardWithRetries(retryContext, { incoming, response, method, body, headers, routingRequest, requestId });
  };

  const server: Server = createServer({ noDelay: true, keepAliveTimeout: 30_000, requestTimeout: 0 }, (incoming, response) => {
    const rawPath = incoming.url ?? '/';
    const queryStart = rawPath.indexOf('?');
    const pathname = queryStart < 0 ? rawPath : rawPath.slice(0, queryStart);
    const handle = async (): Promise<void> => {
      // Guarded on the normalised path (control-paths.ts): `/flush%5Fcache` is `/flush_cache` to the worker behind us.
      const kind = controlPathKind(rawPath);
      if (kind !== 'open') {
        const settings = { token: options.controlToken, listenHost: host, port: (server.address() as AddressInfo).port };
        const refusal =
          kind === 'router-control' ? refuseControlRequest(incoming, normalizeRequestPath(rawPath), settings) : refuseUntrustedRequest(incoming, settings);
        if (refusal !== undefined) {
          sendJson(response, refusal.status, { error: { message: refusal.message } });
          return;
        }
      }
      if (trace !== undefined && pathname === TAP_RECORDS_PATH) {
        trace.serve(incoming, response);
        return;
      }
      if (!isControlPath(pathname) || !(await handleControlRequest(controlContext, incoming, response, pathname, new URLSearchParams(queryStart < 0 ? '' : rawPath.slice(queryStart + 1))))) {
        await proxy(incoming, response, kind !== 'open');
      }
    };
    handle().catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, 500, { error: { message: `router error: ${(error as Error).message}` } });
      else response.destroy(error as Error);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new ServelabError('PORT_IN_USE', `port ${options.port ?? 0} on ${host} is in use: choose another --port`)
          : error,
      );
    });
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  await monitor.checkAll();
  monitor.start();
  const stopInjectedBusyLoop = injectBusyLoopFromEnvironment('router');

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    host,
    port,
    policy,
    workers: () => active.map((worker) => worker.snapshot()),
    addWorker: async (url) => {
      const worker = registry.add(url);
      await monitor.check(worker);
      return worker.snapshot();
    },
    removeWorker: (idOrUrl) => registry.remove(idOrUrl),
    checkHealthNow: () => monitor.checkAll(),
    close: () => {
      closing ??= (async () => {
        monitor.close();
        stopInjectedBusyLoop();
        health.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await dispatcher.destroy();
      })();
      return closing;
    },
  };
}


/** Node's parsed headers (names lower-cased), keeping single values; a repeated header keeps its first value. */
function stringHeaders(headers: IncomingMessage['headers']): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string') result[name] = value;
    else if (Array.isArray(value) && value[0] !== undefined) result[name] = value[0];
  }
  return result;
}

/** A flat `[name, value, ...]` header list without the header `lowerName`. */
function withoutHeader(headers: string[], lowerName: string): string[] {
  const kept: string[] = [];
  for (let index = 0; index + 1 < headers.length; index += 2) {
    if ((headers[index] as string).toLowerCase() !== lowerName) kept.push(headers[index] as string, headers[index + 1] as string);
  }
  return kept;
}
