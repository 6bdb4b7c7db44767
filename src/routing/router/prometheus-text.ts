import type { RouterWorker } from './router-worker.js';

export interface RouterCounters {
  /** Requests the router received on proxied paths. */
  received: number;
  /** Requests that found no eligible worker, or ran out of retries. */
  failed: number;
}

/** The router's `/metrics` in the Prometheus text exposition format (version 0.0.4). */
export function renderPrometheusText(workers: readonly RouterWorker[], counters: RouterCounters): string {
  const lines: string[] = [];
  const family = (name: string, type: 'counter' | 'gauge', help: string, value: (worker: RouterWorker) => number): void => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const worker of workers) lines.push(`${name}{worker="${escapeLabel(worker.url)}"} ${value(worker)}`);
  };
  family('servelab_router_requests_total', 'counter', 'Attempts sent to the worker.', (worker) => worker.requests);
  family('servelab_router_in_flight', 'gauge', 'Requests sent to the worker and not finished.', (worker) => worker.inFlight);
  family('servelab_router_errors_total', 'counter', 'Attempts that failed: no answer, a 5xx answer, or a cut stream.', (worker) => worker.errors);
  family('servelab_router_retries_total', 'counter', 'Attempts that failed on the worker and were retried on another.', (worker) => worker.retries);
  family('servelab_router_worker_healthy', 'gauge', '1 while the worker takes requests.', (worker) => (worker.healthy && !worker.drained ? 1 : 0));
  lines.push(
    '# HELP servelab_router_received_total Requests received on proxied paths.',
    '# TYPE servelab_router_received_total counter',
    `servelab_router_received_total ${counters.received}`,
    '# HELP servelab_router_failed_total Requests answered with an error by the router itself (no worker, retries exhausted).',
    '# TYPE servelab_router_failed_total counter',
    `servelab_router_failed_total ${counters.failed}`,
  );
  return `${lines.join('\n')}\n`;
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
