import type { RoutingPolicy } from '../../types/routing.js';
import { normalizeWorkerUrl, RouterWorker, type WorkerSnapshot } from './router-worker.js';

/**
 * The router's workers: adding (once per normalized URL), finding by id or URL, and removing. `workers` is one array
 * for the router's whole life, changed in place, because the health monitor and the PD router hold it.
 */
export class WorkerRegistry {
  readonly workers: RouterWorker[] = [];
  readonly #policy: RoutingPolicy;
  readonly #log: ((line: string) => void) | undefined;
  #nextWorkerIndex = 0;

  constructor(policy: RoutingPolicy, log: ((line: string) => void) | undefined) {
    this.#policy = policy;
    this.#log = log;
  }

  /** The worker at `url`, added first when it is new; throws on a URL that is not http(s). */
  add(url: string): RouterWorker {
    const normalized = normalizeWorkerUrl(url);
    const existing = this.workers.find((worker) => worker.url === normalized);
    if (existing !== undefined) return existing;
    const worker = new RouterWorker(normalized, this.#nextWorkerIndex++);
    this.workers.push(worker);
    this.#policy.onWorkerAdded?.(worker);
    this.#log?.(`worker ${worker.index} ${worker.url} added`);
    return worker;
  }

  /** By id (a number, or a string of digits) or by URL in any spelling `normalizeWorkerUrl` accepts. */
  find(idOrUrl: number | string): RouterWorker | undefined {
    if (typeof idOrUrl === 'number' || /^\d+$/.test(idOrUrl)) {
      const id = Number(idOrUrl);
      return this.workers.find((worker) => worker.index === id);
    }
    try {
      const normalized = normalizeWorkerUrl(idOrUrl);
      return this.workers.find((worker) => worker.url === normalized);
    } catch {
      return undefined;
    }
  }

  /** It takes no new requests; those in flight finish. Undefined when unknown. */
  remove(idOrUrl: number | string): WorkerSnapshot | undefined {
    const worker = this.find(idOrUrl);
    if (worker === undefined) return undefined;
    worker.drained = true;
    this.workers.splice(this.workers.indexOf(worker), 1);
    this.#policy.onWorkerRemoved?.(worker);
    this.#log?.(`worker ${worker.index} ${worker.url} removed (${worker.inFlight} requests still in flight there)`);
    return worker.snapshot();
  }
}
