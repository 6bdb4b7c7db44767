import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Agent } from 'undici';
import type { RoutingPolicy, RoutingRequest } from '../../types/routing.js';
import { describeUpstreamError, forward } from '../proxy/forward.js';
import type { RouterCounters } from './prometheus-text.js';
import type { RouterTrace } from './router-trace.js';
import type { RouterWorker } from './router-worker.js';
import { sendJson } from './send-json.js';

/** The response header that tells the client how many times its request was retried on another worker. */
export const RETRIES_HEADER = 'x-servelab-retries';

/** The router's standing parts one forwarded request uses. */
export interface RetryContext {
  policy: RoutingPolicy;
  /** The live worker list (changed in place as workers come and go). */
  workers: RouterWorker[];
  dispatcher: Agent;
  counters: RouterCounters;
  /** Retries after the first attempt. */
  maxRetries: number;
  /** Consecutive unanswered attempts that open a worker's breaker; 0 never opens it. */
  breakerFailures: number;
  trace: RouterTrace | undefined;
  log: ((line: string) => void) | undefined;
}

/** One client request as the router read it (body within its cap, headers to forward, the routing view). */
export interface RoutedClientRequest {
  incoming: IncomingMessage;
  response: ServerResponse;
  method: string;
  body: Buffer | null;
  headers: string[];
  routingRequest: RoutingRequest;
}

/** One client request, read and ready to forward to one worker with retries. */
export interface RetriedRequest extends RoutedClientRequest {
  /** The rid, when the request carries one: only such attempts are traced. */
  requestId: string | undefined;
}

/**
 * Forwards a request to the worker the policy picks; when that worker gives no answer at all (refused, reset, cut off
 * before a status), tries another the policy picks among those not tried, up to `maxRetries` times. An answer, even a
 * 5xx, is the client's and is never retried: the worker may have done the work. Each unanswered attempt counts toward
 * the worker's breaker, which a passing health check closes again (worker-monitor.ts).
 */
export async function forwardWithRetries(context: RetryContext, request: RetriedRequest): Promise<void> {
  const { policy, workers: active, maxRetries, breakerFailures, trace } = context;
  const { response, routingRequest, requestId } = request;
  const tried = new Set<RouterWorker>();
  let retries = 0;
  let lastError = '';
  for (;;) {
    const candidates = tried.size === 0 ? active : active.filter((worker) => !tried.has(worker));
    const worker = policy.choose(routingRequest, candidates) as RouterWorker | undefined;
    if (worker === undefined || tried.has(worker) || !active.includes(worker)) {
      context.counters.failed++;
      const exhausted = tried.size > 0;
      sendJson(
        response,
        exhausted ? 502 : 503,
        {
          error: {
            type: exhausted ? 'call_upstream_connection_failed' : 'no_available_workers',
            message: exhausted
              ? `no worker answered after ${tried.size} attempt(s); last error: ${lastError}`
              : 'no healthy worker: check GET /workers',
            retries,
          },
        },
        { [RETRIES_HEADER]: String(retries) },
      );
      return;
    }
    tried.add(worker);
    worker.inFlight++;
    worker.requests++;
    const traced = requestId === undefined ? undefined : trace?.record(requestId, worker.url, worker.index);
    const outcome = await forward({
      dispatcher: context.dispatcher,
      origin: worker.url,
      method: request.method,
      path: request.incoming.url ?? '/',
      headers: request.headers,
      body: request.body,
      response,
      extraResponseHeaders: () => ({ [RETRIES_HEADER]: String(retries) }),
      ...(traced === undefined
        ? {}
        : {
            onResponseStart: (status: number) => {
              traced.httpStatus = status;
            },
          }),
    });
    worker.inFlight--;
    if (!outcome.answered && !outcome.clientClosed) {
      worker.errors++;
      worker.consecutiveRequestFailures++;
      if (breakerFailures > 0 && worker.consecutiveRequestFailures >= breakerFailures && !worker.breakerOpen) {
        worker.breakerOpen = true;
        context.log?.(`worker ${worker.index} ${worker.url} takes no requests until a health check passes: ${worker.consecutiveRequestFailures} attempts in a row got no answer`);
      }
      policy.onRequestFinished?.(routingRequest, worker, false);
      lastError = outcome.error === undefined ? 'no answer' : describeUpstreamError(outcome.error);
      if (retries < maxRetries) {
        worker.retries++;
        retries++;
        continue;
      }
      context.counters.failed++;
      sendJson(
        response,
        502,
        {
          error: {
            type: 'call_upstream_connection_failed',
            message: `worker ${worker.url} did not answer (${lastError}) and the ${maxRetries} retries are used up`,
            retries,
          },
        },
        { [RETRIES_HEADER]: String(retries) },
      );
      return;
    }
    const success = outcome.answered && outcome.error === undefined && (outcome.statusCode ?? 500) < 500;
    if (success) worker.consecutiveRequestFailures = 0;
    else if (!outcome.clientClosed) worker.errors++;
    policy.onRequestFinished?.(routingRequest, worker, success);
    return;
  }
}
