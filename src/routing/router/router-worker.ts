import type { PolledLoad, WorkerState } from '../../types/routing.js';

/** A worker as the router tracks it: the state policies read, plus counters for `/metrics` and `/workers`. */
export class RouterWorker implements WorkerState {
  readonly url: string;
  readonly index: number;
  /** The last health check passed (or none has failed since the worker answered). */
  checkHealthy = false;
  /** Opened by consecutive connection failures on the request path; closed by the next passing health check. */
  breakerOpen = false;
  drained = false;
  inFlight = 0;
  polledLoad?: PolledLoad;

  /** A health check is under way (a slow one must not overlap the next). */
  checking = false;
  consecutiveCheckFailures = 0;
  consecutiveRequestFailures = 0;
  /** Attempts sent to this worker (each retry counts on the worker it went to). */
  requests = 0;
  /** Attempts that failed: no answer, a 5xx answer, or a stream cut short. */
  errors = 0;
  /** Attempts that failed on this worker and were retried on another. */
  retries = 0;

  constructor(url: string, index: number) {
    this.url = url;
    this.index = index;
  }

  get healthy(): boolean {
    return this.checkHealthy && !this.breakerOpen;
  }

  snapshot(): WorkerSnapshot {
    return {
      id: this.index,
      url: this.url,
      healthy: this.healthy,
      drained: this.drained,
      inFlight: this.inFlight,
      load: this.polledLoad?.totalTokens ?? null,
      requests: this.requests,
      errors: this.errors,
      retries: this.retries,
    };
  }
}

/** A worker as `GET /workers` lists it. */
export interface WorkerSnapshot {
  id: number;
  url: string;
  healthy: boolean;
  drained: boolean;
  inFlight: number;
  /** The token load the worker last reported (`/v1/loads` or `/get_load`), null when not polled or not answered. */
  load: number | null;
  requests: number;
  errors: number;
  retries: number;
}

/** Normalizes a worker URL: no trailing slash, so the same server is not added twice under two spellings. */
export function normalizeWorkerUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TypeError(`worker URL ${url} must start with http:// or https://`);
  }
  return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/+$/, '')}`;
}
