import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Agent } from 'undici';
import { flushCacheOnce } from '../../clients/common/flush-cache.js';
import { HARNESS_PATH, type ProcessHealthMonitor, serveHarness } from '../../utils/process-health.js';
import { readBody } from '../proxy/read-body.js';
import { renderPrometheusText, type RouterCounters } from './prometheus-text.js';
import { sendJson } from './send-json.js';
import type { WorkerMonitor } from './worker-monitor.js';
import type { WorkerRegistry } from './worker-registry.js';

/** What the control endpoints read and change: the router's workers, their monitor, its counters and self-measure. */
export interface ControlContext {
  registry: WorkerRegistry;
  monitor: WorkerMonitor;
  counters: RouterCounters;
  dispatcher: Agent;
  health: ProcessHealthMonitor;
}

/** The most a control request's body may hold: a worker's address. */
const CONTROL_BODY_MAX_BYTES = 64 * 1024;

const CONTROL_PATHS = new Set(['/health', '/readiness', '/workers', '/add_worker', '/remove_worker', '/metrics', '/flush_cache', HARNESS_PATH]);

/** A path the router may answer itself; one it does not (say `GET /add_worker`) is still proxied. */
export function isControlPath(pathname: string): boolean {
  return CONTROL_PATHS.has(pathname) || pathname.startsWith('/workers/');
}

/**
 * Answers one control request (the list in startRouter's comment). False when the method and path name none, so the
 * caller proxies the request instead.
 */
export async function handleControlRequest(
  context: ControlContext,
  incoming: IncomingMessage,
  response: ServerResponse,
  pathname: string,
  query: URLSearchParams,
): Promise<boolean> {
  const { registry, monitor } = context;
  const active = registry.workers;
  const method = incoming.method ?? 'GET';
  if (pathname === '/health' && method === 'GET') {
    sendJson(response, 200, { status: 'ok' });
  } else if (pathname === '/readiness' && method === 'GET') {
    const healthy = active.filter((worker) => worker.healthy && !worker.drained).length;
    sendJson(response, healthy > 0 ? 200 : 503, { ready: healthy > 0, healthyWorkers: healthy, totalWorkers: active.length });
  } else if (pathname === '/workers' && method === 'GET') {
    sendJson(response, 200, { workers: active.map((worker) => worker.snapshot()) });
  } else if ((pathname === '/workers' && method === 'POST') || (pathname === '/add_worker' && method === 'POST')) {
    let url = query.get('url') ?? undefined;
    if (url === undefined) {
      try {
        // A worker's address is a few dozen bytes.
        const parsed = JSON.parse((await readBody(incoming, CONTROL_BODY_MAX_BYTES)).toString('utf8')) as { url?: unknown };
        if (typeof parsed.url === 'string') url = parsed.url;
      } catch {
        // Reported below.
      }
    }
    if (url === undefined) {
      sendJson(response, 400, { error: { message: 'give the worker as {"url": "http://host:port"}' } });
      return true;
    }
    try {
      const worker = registry.add(url);
      await monitor.check(worker);
      sendJson(response, 200, worker.snapshot());
    } catch (error) {
      sendJson(response, 400, { error: { message: (error as Error).message } });
    }
  } else if ((pathname.startsWith('/workers/') && method === 'DELETE') || (pathname === '/remove_worker' && method === 'POST')) {
    const key = pathname === '/remove_worker' ? (query.get('url') ?? '') : decodeURIComponent(pathname.slice('/workers/'.length));
    const removed = registry.remove(key);
    if (removed === undefined) sendJson(response, 404, { error: { message: `no worker with id or URL "${key}"` } });
    else sendJson(response, 200, removed);
  } else if (pathname === '/metrics' && method === 'GET') {
    const text = renderPrometheusText(active, context.counters);
    response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4', 'content-length': Buffer.byteLength(text) });
    response.end(text);
  } else if (pathname === '/flush_cache' && (method === 'POST' || method === 'GET')) {
    await flushAllCaches(context, response);
  } else if (pathname === HARNESS_PATH) {
    serveHarness(context.health, incoming, response);
  } else {
    return false;
  }
  return true;
}

/** `/flush_cache` sent to every worker; 200 only when every one answered 200. */
async function flushAllCaches(context: ControlContext, response: ServerResponse): Promise<void> {
  const results = await Promise.all(
    context.registry.workers.map(async (worker) => {
      const answer = await flushCacheOnce(worker.url, context.dispatcher);
      return { url: worker.url, status: answer.statusCode, ...(answer.error === undefined ? {} : { error: answer.error }) };
    }),
  );
  const allOk = results.every((result) => result.status === 200);
  sendJson(response, allOk ? 200 : 400, { workers: results });
}
