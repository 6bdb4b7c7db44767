import { request, type Dispatcher } from 'undici';
import type { PolledLoad } from '../../types/routing.js';
import type { RouterWorker } from './router-worker.js';

export interface WorkerMonitorOptions {
  dispatcher: Dispatcher;
  healthCheckIntervalMs: number;
  healthCheckTimeoutMs: number;
  /** Consecutive failed checks before a healthy worker is marked unhealthy. */
  healthFailureThreshold: number;
  /** Poll `/v1/loads` (or `/get_load`) at this interval (only when the policy uses polled load). */
  loadPollIntervalMs?: number;
  /** Told when a worker starts or stops taking requests because of its health checks. */
  log?: (line: string) => void;
}

/**
 * The router's timers: `/health` checks and load polls (`/v1/loads`, else `/get_load`) of every worker. Kept apart from the policies, which
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
        // SGLang's /v1/loads first (as smg asks), then the deprecated /get_load that older servers and
        // sglang-router-era setups answer.
        let load = await this.#getLoad(`${worker.url}/v1/loads`);
        load ??= await this.#getLoad(`${worker.url}/get_load`);
        if (load === undefined) delete worker.polledLoad;
        else worker.polledLoad = { ...load, sequence: (worker.polledLoad?.sequence ?? 0) + 1 };
      }),
    );
  }

  async #getLoad(url: string): Promise<Omit<PolledLoad, 'sequence'> | undefined> {
    return this.#get(url).then(
      (answer) => (answer.statusCode === 200 ? parseLoad(answer.body) : undefined),
      () => undefined,
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
 * A load report, summed over data-parallel ranks:
 * - SGLang's `/v1/loads`: `{"loads": [{num_total_tokens, num_waiting_uncached_tokens, gen_throughput, token_usage, ...}]}`;
 * - SGLang's deprecated `/get_load`: a list with one `{num_reqs, num_waiting_reqs, num_tokens}` per rank, where
 *   `num_reqs` already counts running and waiting requests and `num_tokens` includes waiting prompts;
 * - sglang-router 0.3.x's `{"load": n}`, taken as a token count.
 * Anything else is no report (policies fall back to in-flight counts).
 */
export function parseLoad(body: unknown): Omit<PolledLoad, 'sequence'> | undefined {
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const fields = body as Record<string, unknown>;
    if (Array.isArray(fields['loads'])) return parseV1Loads(fields['loads']);
    const load = fields['load'];
    return typeof load === 'number' && Number.isFinite(load) ? { totalTokens: load } : undefined;
  }
  if (Array.isArray(body) && body.length > 0) {
    let totalTokens = 0;
    for (const rank of body) {
      if (typeof rank !== 'object' || rank === null) return undefined;
      const tokens = (rank as Record<string, unknown>)['num_tokens'];
      if (typeof tokens !== 'number' || !Number.isFinite(tokens)) return undefined;
      totalTokens += tokens;
    }
    return { totalTokens };
  }
  return undefined;
}

function parseV1Loads(ranks: unknown[]): Omit<PolledLoad, 'sequence'> | undefined {
  if (ranks.length === 0) return undefined;
  let totalTokens = 0;
  let waitingUncachedTokens = 0;
  let genThroughput = 0;
  let tokenUsage = 0;
  for (const rank of ranks) {
    if (typeof rank !== 'object' || rank === null) return undefined;
    const fields = rank as Record<string, unknown>;
    const total = fields['num_total_tokens'];
    if (typeof total !== 'number' || !Number.isFinite(total)) return undefined;
    totalTokens += total;
    waitingUncachedTokens += finiteOrZero(fields['num_waiting_uncached_tokens']);
    genThroughput += finiteOrZero(fields['gen_throughput']);
    tokenUsage += finiteOrZero(fields['token_usage']);
  }
  // Token usage is a ratio: averaged over ranks, as smg does; the rest are sums.
  return { totalTokens, waitingUncachedTokens, genThroughput, tokenUsage: tokenUsage / ranks.length };
}

function finiteOrZero(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}
