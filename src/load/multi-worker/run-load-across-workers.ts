import { randomBytes } from 'node:crypto';
import { loadProtocolClient } from '../../clients/registry.js';
import { ServelabError } from '../../errors/servelab-error.js';
import type { ProtocolClient } from '../../types/client.js';
import type { LoadProgress, LoadResult, MultiWorkerLoadOptions } from '../../types/load.js';
import type { RequestRecord } from '../../types/record.js';
import type { Milliseconds } from '../../types/time.js';
import { runLoad } from '../run-load.js';
import { validateRunLoadOptions } from '../validate-load-options.js';
import { runWarmupOnly } from '../warmup-only.js';
import { LoadWorkerHandle } from './load-worker-handle.js';
import { latestEndTime, mergeWorkerRecords } from './merge-worker-results.js';
import { partitionRoundRobin, splitCap } from './partition-requests.js';
import { ProgressAggregator } from './progress-aggregator.js';
import { loadWorkerScriptPath } from './worker-script-path.js';

const PROGRESS_INTERVAL_MS = 250;
/** Time between "every worker is ready" and the shared start instant: room for the `start` messages and first timers. */
const DEFAULT_START_LEAD_MS: Milliseconds = 300;

/**
 * `runLoad` spread over several worker threads, for rates one core cannot drive. Same result and semantics: the
 * records of the measured requests in workload order, warmup records apart, `startTime` = the schedule origin `t0`.
 *
 * Worker w gets its own protocol client (built from `clientSpec`) and its own pacer, and takes the requests i with
 * i % workers == w. Every pacer follows the one absolute schedule from the same `t0`, chosen here as an epoch instant
 * `startLeadMs` after all workers are ready (each thread converts it to its own monotonic scale), so records equal the
 * single-worker path's in all but measured times: same ids, dataset indices, lengths, and scheduled times exactly
 * `(t0 + offset) / 1000`. Warmup requests run first in this thread (through `client`, or a client built from
 * `clientSpec`), before `t0`. Progress is summed over the workers. An abort stops every worker (what is in flight is
 * recorded as aborted) and still returns the merged records; a worker that fails rejects the run with a
 * ServelabError naming it, after the others are stopped.
 *
 * With one worker (or one request) the run happens in this thread through `runLoad`. Open loop only: a closed loop's
 * pace is set by the server's answers, not by a pacer, so it is rejected with more than one worker. `maxConcurrency`
 * and `clientSpec.options.maxConnections` are split over the workers (shares that add up to the cap).
 */
export async function runLoadAcrossWorkers(options: MultiWorkerLoadOptions): Promise<LoadResult> {
  validateRunLoadOptions(options);
  const workerCount = Math.min(options.workers, Math.max(options.requests.length, 1));
  validateWorkerOptions(options, workerCount);
  if (workerCount === 1) return runInThisThread(options);
  return new MultiWorkerRun(options, workerCount).execute();
}

function validateWorkerOptions(options: MultiWorkerLoadOptions, workerCount: number): void {
  if (!(Number.isInteger(options.workers) && options.workers >= 1)) {
    throw new ServelabError('INVALID_CONFIG', `client workers must be a whole number of at least 1, got ${options.workers}`);
  }
  if (workerCount === 1) return;
  if (options.mode?.kind === 'closed') {
    throw new ServelabError(
      'INVALID_CONFIG',
      'a closed loop (concurrency or user stages) runs on one client worker: its pace is set by the answers, not by a pacer; set client workers to 1',
    );
  }
  if (options.maxConcurrency !== undefined && options.maxConcurrency < workerCount) {
    throw new ServelabError(
      'INVALID_CONFIG',
      `maxConcurrency ${options.maxConcurrency} cannot be split over ${workerCount} client workers; use at most ${options.maxConcurrency} workers`,
    );
  }
  const leadMs = options.startLeadMs ?? DEFAULT_START_LEAD_MS;
  if (!(leadMs >= 0 && Number.isFinite(leadMs))) {
    throw new ServelabError('INVALID_CONFIG', `startLeadMs must be a finite number of at least 0, got ${leadMs}`);
  }
}

async function createClient(options: MultiWorkerLoadOptions): Promise<ProtocolClient> {
  return loadProtocolClient(options.clientSpec.protocol, { ...options.clientSpec.options, clock: options.clock });
}

async function runInThisThread(options: MultiWorkerLoadOptions): Promise<LoadResult> {
  const client = options.client ?? (await createClient(options));
  try {
    return await runLoad({ ...options, client });
  } finally {
    if (options.client === undefined) await client.close().catch(() => undefined);
  }
}

class MultiWorkerRun {
  readonly #options: MultiWorkerLoadOptions;
  readonly #workerCount: number;
  readonly #requestIdPrefix: string;
  readonly #aggregator: ProgressAggregator;
  /** Aborts the warmup (run abort or a failed worker). */
  readonly #warmupAbort = new AbortController();
  #handles: LoadWorkerHandle[] = [];
  #phase: LoadProgress['phase'] = 'warmup';
  /** `t0` on this thread's monotonic scale, for progress. */
  #t0Ms: Milliseconds = 0;
  #started = false;

  constructor(options: MultiWorkerLoadOptions, workerCount: number) {
    this.#options = options;
    this.#workerCount = workerCount;
    this.#requestIdPrefix = options.requestIdPrefix ?? `servelab-${randomBytes(4).toString('hex')}-`;
    this.#aggregator = new ProgressAggregator(options.requests.length, workerCount);
  }

  async execute(): Promise<LoadResult> {
    const { clock, signal, onProgress } = this.#options;
    const scriptPath = loadWorkerScriptPath();
    const onAbort = (): void => {
      this.#warmupAbort.abort();
      if (this.#started) for (const handle of this.#handles) handle.abort();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted === true) this.#warmupAbort.abort();
    const progressTimer = onProgress === undefined ? undefined : setInterval(() => this.#reportProgress(), PROGRESS_INTERVAL_MS);
    progressTimer?.unref();
    try {
      this.#handles = this.#startWorkers(scriptPath);
      // The warmup runs here while the workers load; a worker failing meanwhile stops the warmup too.
      const warmup = this.#runWarmup();
      try {
        await Promise.all(this.#handles.map((handle) => handle.ready));
      } catch (error) {
        this.#warmupAbort.abort();
        await warmup.catch(() => undefined);
        throw error;
      }
      const warmupRecords = await warmup;
      if (signal?.aborted === true) {
        // 'done' only once the workers are gone: a progress tick during their termination would otherwise report
        // 'done' before the final report does, twice in all.
        await this.#terminateAll();
        this.#phase = 'done';
        const nowS = clock.nowEpochSeconds();
        return { records: [], warmupRecords, startTime: nowS, endTime: nowS, interrupted: true };
      }
      const t0EpochMs = this.#options.startAtEpochMs ?? Math.ceil(clock.nowEpochSeconds() * 1000 + (this.#options.startLeadMs ?? DEFAULT_START_LEAD_MS));
      this.#t0Ms = t0EpochMs - clock.toEpochSeconds(0) * 1000;
      this.#phase = 'measured';
      this.#started = true;
      this.#options.onStart?.(t0EpochMs / 1000);
      for (const handle of this.#handles) handle.start(t0EpochMs);
      const results = await Promise.all(this.#handles.map((handle) => handle.finished));
      this.#phase = 'done';
      const startTime = t0EpochMs / 1000;
      return {
        records: mergeWorkerRecords(
          results.map((result) => result.records),
          this.#requestIdPrefix,
          this.#options.requests.length,
        ),
        warmupRecords,
        startTime,
        endTime: latestEndTime(
          results.map((result) => result.endTime),
          startTime,
        ),
        interrupted: results.some((result) => result.interrupted),
      };
    } catch (error) {
      await this.#terminateAll();
      throw error;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      if (progressTimer !== undefined) clearInterval(progressTimer);
      if (this.#phase === 'done') this.#reportProgress();
    }
  }

  #startWorkers(scriptPath: string): LoadWorkerHandle[] {
    const { clientSpec, maxConcurrency, onRecord } = this.#options;
    const maxConnections = clientSpec.options.maxConnections;
    const shares = partitionRoundRobin(this.#options.requests, this.#options.arrivalOffsetsMs, this.#workerCount);
    return shares.map(
      (share, worker) =>
        new LoadWorkerHandle(
          scriptPath,
          {
            workerIndex: worker,
            workerCount: this.#workerCount,
            clientSpec: {
              protocol: clientSpec.protocol,
              options: {
                ...clientSpec.options,
                ...(maxConnections === undefined ? {} : { maxConnections: splitCap(maxConnections, this.#workerCount, worker) }),
              },
            },
            ...share,
            requestIdPrefix: this.#requestIdPrefix,
            ...(maxConcurrency === undefined ? {} : { maxConcurrency: splitCap(maxConcurrency, this.#workerCount, worker) }),
            ...(onRecord === undefined ? {} : { streamRecords: true }),
          },
          (progress) => this.#aggregator.update(worker, progress),
          onRecord === undefined ? undefined : (records) => records.forEach((record) => onRecord(record)),
        ),
    );
  }

  /** Warmup requests, all at once (at most `maxConcurrency`) in this thread, through `runLoad` with no measured requests. */
  async #runWarmup(): Promise<RequestRecord[]> {
    const { warmupRequests, clock } = this.#options;
    if (warmupRequests.length === 0) return [];
    const client = this.#options.client ?? (await createClient(this.#options));
    try {
      return await runWarmupOnly({
        warmupRequests,
        warmupTimeoutMs: this.#options.warmupTimeoutMs,
        client,
        clock,
        signal: this.#warmupAbort.signal,
        requestIdPrefix: this.#requestIdPrefix,
        ...(this.#options.maxConcurrency === undefined ? {} : { maxConcurrency: this.#options.maxConcurrency }),
      });
    } finally {
      if (this.#options.client === undefined) await client.close().catch(() => undefined);
    }
  }

  async #terminateAll(): Promise<void> {
    await Promise.all(this.#handles.map((handle) => handle.terminate()));
  }

  #reportProgress(): void {
    const elapsedMs = this.#phase === 'warmup' ? 0 : this.#options.clock.nowMs() - this.#t0Ms;
    this.#options.onProgress?.(this.#aggregator.snapshot(this.#phase, elapsedMs));
  }
}
