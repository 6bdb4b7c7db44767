import { request, type Dispatcher } from 'undici';
import type { RouterWorker } from './router-worker.js';

export interface WorkerMonitorOptions {
  dispatcher: Dispatcher;
  healthCheckIntervalMs: number;
  healthCheckTimeoutMs: number;
  /** Consecutive failed checks before a healthy worker is marked unhealthy. */
  healthFailureThreshold: number;
  /** Poll `/get_load` at this interval (only when the policy uses polled load). */
  loadPollIntervalMs?: number;
  /** Told when a worker starts or stops taking requests because of its health checks. */
  log?: (line: string) => void;
}

/**
 * The router's timers: `/health` checks and `/get_load` polls of every worker. Kept apart from the policies, which
 * never see a timer; this is the thin real-time driver beside them.
 */
export class WorkerMonitor {
  readonly #options: WorkerMonitorOptions;
  readonly #workers: () => readonly RouterWorker[];
  readonly #timers: NodeJS.Timeout[] = [];
  #closed = false;

  constructor(options: WorkerMonitorOptions, workers: () => readonly RouterWorker[]) {
    this.#options = options;
    this.#workers = workers;
  }

  start(): void {
    const health = setInterval(() => void this.checkAll(), this.#options.healthCheckIntervalMs);
    health.unref();
    this.#timers.push(health);
    const loadInterval = this.#options.loadPollIntervalMs;
    if (loadInterval !== undefined) {
      const load = setInterval(() => void this.pollLoads(), loadInterval);
      load.unref();
      this.#timers.push(load);
    }
  }

  close(): void {
    this.#closed = true;
    for (const timer of this.#timers) clearInterval(timer);
  }

  async checkAll(): Promise<void> {
    await Promise.all(this.#workers().map((worker) => this.check(worker)));
  }

  /** One `/health` check. A pass marks the worker healthy at once and closes its circuit breaker. */
  async check(worker: RouterWorker): Promise<void> {
    if (worker.checking) return;
    worker.checking = true;
    const passed = await this.#get(`${worker.url}/health`).then(
      (answer) => answer.statusCode === 200,
      () => false,
    );
    worker.checking = false;
    if (this.#closed) return;
    const wasHealthy = worker.healthy;
    this.#apply(worker, passed);
    if (worker.healthy !== wasHealthy) {
      this.#options.log?.(`worker ${worker.index} ${worker.url} is ${worker.healthy ? 'healthy' : 'unhealthy'} (health check ${passed ? 'passed' : 'failed'})`);
    }
  }

  #apply(worker: RouterWorker, passed: boolean): void {
    if (passed) {
      worker.checkHealthy = true;
      worker.breakerOpen = false;
      worker.consecutiveCheckFailures = 0;
      worker.consecutiveRequestFailures = 0;
    } else {
      worker.consecutiveCheckFailures++;
      // A worker that never passed stays unhealthy; one that did gets `healthFailureThreshold` chances.
      if (!worker.checkHealthy || worker.consecutiveCheckFailures >= this.#options.healthFailureThreshold) {
        worker.checkHealthy = false;
      }
    }
  }

  async pollLoads(): Promise<void> {
    await Promise.all(
      this.#workers().map(async (worker) => {
        const load = await this.#get(`${worker.url}/get_load`).then(
          (answer) => (answer.statusCode === 200 ? parseLoad(answer.body) : undefined),
          () => undefined,
        );
        if (load === undefined) delete worker.polledLoad;
        else worker.polledLoad = load;
      }),
    );
  }

  async #get(url: string): Promise<{ statusCode: number; body: unknown }> {
    const timeoutMs = this.#options.healthCheckTimeoutMs;
    const answer = await request(url, {
      dispatcher: this.#options.dispatcher,
      method: 'GET',
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await answer.body.text();
    let body: unknown = undefined;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      // /health may answer plain text; only /get_load needs JSON.
    }
    return { statusCode: answer.statusCode, body };
  }
}

/**
 * The load in a `/get_load` answer. sglang-router reads `{"load": n}`; newer SGLang servers answer a list with one
 * object per data-parallel rank (`num_reqs`, `num_waiting_reqs`, `num_tokens`), which counts as the sum of running
 * and waiting requests over the ranks. Anything else is no answer (the policy falls back to in-flight counts).
 */
export function parseLoad(body: unknown): number | undefined {
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const load = (body as Record<string, unknown>)['load'];
    return typeof load === 'number' && Number.isFinite(load) ? load : undefined;
  }
  if (Array.isArray(body) && body.length > 0) {
    let total = 0;
    for (const rank of body) {
      if (typeof rank !== 'object' || rank === null) return undefined;
      const fields = rank as Record<string, unknown>;
      const running = fields['num_reqs'];
      const waiting = fields['num_waiting_reqs'];
      if (typeof running !== 'number') return undefined;
      total += running + (typeof waiting === 'number' ? waiting : 0);
    }
    return total;
  }
  return undefined;
}
