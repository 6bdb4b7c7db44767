import { randomBytes } from 'node:crypto';
import type { ClientOutcome, RequestRecord } from '../types/record.js';
import type { LoadProgress, LoadResult, RunLoadOptions } from '../types/load.js';
import type { Milliseconds } from '../types/time.js';
import type { WorkloadRequest } from '../types/workload.js';
import { runClosedLoop, sleepUnlessAborted } from './closed-loop.js';
import { ConcurrencyCap } from './concurrency-cap.js';
import { runOpenLoop } from './open-loop.js';
import { PreciseWaiter } from './precise-wait.js';
import { RecordStore } from './record-store.js';
import { buildRequestRecord, NEVER_SENT_OUTCOME, outcomeFromThrow } from './request-record.js';
import { validateRunLoadOptions } from './validate-load-options.js';

const PROGRESS_INTERVAL_MS = 250;
const NO_ROW = -1;

/**
 * Offers a workload to a client and records every request's lifecycle.
 *
 * Open loop (the default, open-loop.ts): request i is handed to the client at its absolute instant
 * `t0 + arrivalOffsetsMs[i]`, whatever is still in flight; each record keeps its `scheduledTime` so that lag shows as
 * `arrivalTime - scheduledTime` instead of being silently measured from a late send. Closed loop (closed-loop.ts):
 * `mode.concurrency` users each send the next request when their previous one finishes. `maxConcurrency`
 * (concurrency-cap.ts) holds arrivals back while that many requests are in flight.
 *
 * Finished records are kept in a column store (record-store.ts: a fixed ~160 bytes a request plus 8 bytes per
 * per-token gap, instead of the ~500 bytes of an object), and given back as objects in workload order at the end.
 *
 * Never throws for a failed request (a failure is a record). Resolves once every sent request has finished; an
 * abort stops sending, aborts what is in flight and resolves with `interrupted: true`.
 */
export async function runLoad(options: RunLoadOptions): Promise<LoadResult> {
  validateRunLoadOptions(options);
  return new LoadRun(options).execute();
}

class LoadRun {
  readonly #options: RunLoadOptions;
  readonly #abortController = new AbortController();
  readonly #requestIdPrefix: string;
  readonly #store: RecordStore;
  /** Row of each measured request's record in the store (NO_ROW until it has one). */
  readonly #rowOf: Int32Array;
  readonly #warmupRecords: RequestRecord[] = [];
  readonly #cap: ConcurrencyCap | undefined;
  #phase: LoadProgress['phase'] = 'warmup';
  #t0Ms: Milliseconds = 0;
  #sent = 0;
  #completed = 0;
  #failed = 0;
  #inFlight = 0;
  #lastSendLagMs: Milliseconds = 0;
  #sendingDone = false;
  #settle: (() => void) | undefined;
  /** Whether the run was aborted: a plain field for the hot loops (see PreciseWaiter's field of the same name). */
  #aborted = false;

  constructor(options: RunLoadOptions) {
    this.#options = options;
    this.#requestIdPrefix = options.requestIdPrefix ?? `servelab-${randomBytes(4).toString('hex')}-`;
    this.#store = new RecordStore({ requestIdPrefix: this.#requestIdPrefix });
    this.#rowOf = new Int32Array(options.requests.length).fill(NO_ROW);
    this.#cap = options.maxConcurrency === undefined ? undefined : new ConcurrencyCap(options.maxConcurrency, options.requests.length);
    // Registered first, so that every other abort listener already sees the flag set.
    this.#abortController.signal.addEventListener('abort', () => (this.#aborted = true), { once: true });
  }

  async execute(): Promise<LoadResult> {
    const { clock, signal, onProgress } = this.#options;
    // Requests held back by maxConcurrency when the run is interrupted will never be sent: record them at once.
    this.#abortController.signal.addEventListener(
      'abort',
      () => {
        this.#recordNeverSent();
        this.#settleIfDone();
      },
      { once: true },
    );
    const forwardAbort = (): void => this.#abortController.abort();
    if (signal?.aborted === true) forwardAbort();
    signal?.addEventListener('abort', forwardAbort, { once: true });
    const progressTimer = onProgress === undefined ? undefined : setInterval(() => this.#reportProgress(), PROGRESS_INTERVAL_MS);
    progressTimer?.unref();
    const mode = this.#options.mode ?? { kind: 'open' };
    // Created before the warmup so that its timer thread is up by the first measured request.
    const waiter = mode.kind === 'open' ? new PreciseWaiter(clock, this.#abortController.signal) : undefined;
    const startAtEpochMs = this.#options.startAtEpochMs;
    const isAborted = (): boolean => this.#aborted;
    try {
      await this.#runWarmup();
      // The schedule's origin is set only once the pacer's timer thread runs (see PreciseWaiter.ready).
      await waiter?.ready();
      this.#phase = 'measured';
      // A given origin is on the epoch (it may come from another thread, whose monotonic scale differs): this clock's
      // own epoch anchor turns it into a reading on its monotonic scale.
      this.#t0Ms = startAtEpochMs === undefined ? clock.nowMs() : startAtEpochMs - clock.toEpochSeconds(0) * 1000;
      this.#options.onStart?.(startAtEpochMs === undefined ? clock.toEpochSeconds(this.#t0Ms) : startAtEpochMs / 1000);
      const settled = new Promise<void>((resolve) => (this.#settle = resolve));
      if (mode.kind === 'closed') {
        // Node's timers can fire up to a millisecond early: sleep again until the origin has really come.
        while (startAtEpochMs !== undefined && !this.#aborted && clock.nowMs() < this.#t0Ms) {
          await sleepUnlessAborted(Math.ceil(this.#t0Ms - clock.nowMs()), this.#abortController.signal);
        }
        await runClosedLoop({
          clock,
          mode,
          t0Ms: this.#t0Ms,
          requestCount: this.#options.requests.length,
          send: (index) => this.#dispatch(index, clock.nowMs(), false),
          signal: this.#abortController.signal,
          isAborted,
        });
      } else {
        await runOpenLoop({
          clock,
          t0Ms: this.#t0Ms,
          arrivalOffsetsMs: this.#options.arrivalOffsetsMs,
          waiter: waiter as PreciseWaiter,
          arrive: (index, scheduledMs) => this.#arrive(index, scheduledMs),
          isAborted,
        });
      }
      this.#sendingDone = true;
      this.#settleIfDone();
      await settled;
    } finally {
      signal?.removeEventListener('abort', forwardAbort);
      if (progressTimer !== undefined) clearInterval(progressTimer);
      waiter?.close();
    }
    this.#phase = 'done';
    this.#reportProgress();
    return {
      records: this.#recordsInWorkloadOrder(),
      warmupRecords: this.#warmupRecords,
      startTime: startAtEpochMs === undefined ? clock.toEpochSeconds(this.#t0Ms) : startAtEpochMs / 1000,
      endTime: clock.nowEpochSeconds(),
      interrupted: this.#aborted,
    };
  }

  /**
   * Sends the warmup requests all at once, as SGLang's bench_serving does (`asyncio.gather` of every warmup task, at
   * most `--max-concurrency` at a time), awaits them all and keeps their records in order. Together they warm the
   * server's batched path and servelab's own client (its hot code compiled, its connections open) before t0.
   */
  async #runWarmup(): Promise<void> {
    const { warmupRequests } = this.#options;
    const records = new Array<RequestRecord | undefined>(warmupRequests.length);
    // Each warmup has its own controller (its deadline aborts it alone); the run's abort reaches them all through one
    // listener, not one per warmup on the run's signal (Node warns past ten listeners on one signal).
    const inFlight = new Set<AbortController>();
    const abortAll = (): void => {
      for (const controller of inFlight) controller.abort();
    };
    const runSignal = this.#abortController.signal;
    runSignal.addEventListener('abort', abortAll, { once: true });
    let next = 0;
    const lanes = Math.min(warmupRequests.length, this.#options.maxConcurrency ?? warmupRequests.length);
    const lane = async (): Promise<void> => {
      while (next < warmupRequests.length && !this.#aborted) {
        const index = next++;
        const controller = new AbortController();
        inFlight.add(controller);
        try {
          records[index] = await this.#sendWarmup(index, controller);
        } finally {
          inFlight.delete(controller);
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: lanes }, lane));
    } finally {
      runSignal.removeEventListener('abort', abortAll);
    }
    for (const record of records) if (record !== undefined) this.#warmupRecords.push(record);
  }

  async #sendWarmup(index: number, warmupAbort: AbortController): Promise<RequestRecord> {
    const { clock, client, warmupRequests } = this.#options;
    const workload = warmupRequests[index] as WorkloadRequest;
    const requestId = `${this.#requestIdPrefix}warmup-${index}`;
    const scheduledTime = clock.nowEpochSeconds();
    let outcome: ClientOutcome;
    let timedOut = false;
    const timeoutMs = this.#options.warmupTimeoutMs;
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            warmupAbort.abort();
          }, timeoutMs);
    try {
      outcome = await client.send({ requestId, workload, signal: warmupAbort.signal });
    } catch (error) {
      outcome = outcomeFromThrow(error, this.#aborted);
    } finally {
      clearTimeout(timer);
    }
    if (timedOut && !this.#aborted && !outcome.success) {
      outcome = {
        ...outcome,
        error: 'total_timeout',
        errorMessage: `the warmup request got no complete answer within the warmup timeout of ${timeoutMs} ms (setting warmupTimeoutMs)`,
      };
    }
    return buildRequestRecord(workload, { requestId, warmup: true, scheduledTime, dispatchTime: scheduledTime, heldForConcurrency: false }, outcome);
  }

  /** An open-loop instant came: send now, or hold the request while the concurrency cap is reached. */
  #arrive(index: number, scheduledMs: Milliseconds): void {
    const cap = this.#cap;
    if (cap !== undefined && !cap.admits(this.#inFlight)) {
      cap.hold(index, scheduledMs);
      return;
    }
    void this.#dispatch(index, scheduledMs, false);
  }

  /** Hands one request to the client; resolves when its record is kept. */
  #dispatch(index: number, scheduledMs: Milliseconds, held: boolean): Promise<void> {
    const { clock, client, requests } = this.#options;
    const workload = requests[index] as WorkloadRequest;
    const requestId = this.#requestIdOf(index);
    const dispatchMs = clock.nowMs();
    this.#lastSendLagMs = dispatchMs - scheduledMs;
    this.#inFlight++;
    this.#sent++;
    let pending: Promise<ClientOutcome>;
    try {
      pending = client.send({ requestId, workload, signal: this.#abortController.signal });
    } catch (error) {
      pending = Promise.reject(error);
    }
    const finish = (outcome: ClientOutcome): void => {
      // A failure is placed in time where the client saw it (a stream cut by a crash ends then), not at its arrival.
      if (!outcome.success && outcome.finishTime === undefined) outcome.finishTime = clock.nowEpochSeconds();
      this.#keep(
        index,
        buildRequestRecord(
          workload,
          {
            requestId,
            warmup: false,
            scheduledTime: this.#scheduledEpochSeconds(index, scheduledMs),
            dispatchTime: clock.toEpochSeconds(dispatchMs),
            heldForConcurrency: held,
          },
          outcome,
        ),
      );
      this.#inFlight--;
      this.#completed++;
      if (!outcome.success) this.#failed++;
      if (!this.#aborted) this.#cap?.release(() => this.#inFlight, (next, nextScheduledMs) => void this.#dispatch(next, nextScheduledMs, true));
      this.#settleIfDone();
    };
    return pending.then(finish, (error: unknown) => finish(outcomeFromThrow(error, this.#aborted)));
  }

  /** Hands a final record on (to the run journal); a listener that throws must not lose the request's accounting. */
  #emit(record: RequestRecord): void {
    const onRecord = this.#options.onRecord;
    if (onRecord === undefined) return;
    try {
      onRecord(record);
    } catch {
      // The record is kept in memory regardless; the listener reports its own failures.
    }
  }

  /** Keeps a final record and hands it on (to the run journal, which writes it to disk as it finishes). */
  #keep(index: number, record: RequestRecord): void {
    this.#rowOf[index] = this.#store.add(record);
    this.#emit(record);
  }

  #recordsInWorkloadOrder(): RequestRecord[] {
    const records: RequestRecord[] = [];
    for (let index = 0; index < this.#rowOf.length; index++) {
      const row = this.#rowOf[index] as number;
      if (row !== NO_ROW) records.push(this.#store.get(row));
    }
    return records;
  }

  /** After an interrupt, requests whose instant came but that were still held back get an `aborted` record. */
  #recordNeverSent(): void {
    const { requests } = this.#options;
    this.#cap?.drain((index, scheduledMs) => {
      this.#keep(
        index,
        buildRequestRecord(
          requests[index] as WorkloadRequest,
          { requestId: this.#requestIdOf(index), warmup: false, scheduledTime: this.#scheduledEpochSeconds(index, scheduledMs), heldForConcurrency: true },
          NEVER_SENT_OUTCOME,
        ),
      );
      this.#completed++;
      this.#failed++;
    });
  }

  #requestIdOf(index: number): string {
    const globalIndex = this.#options.requestIndices === undefined ? index : (this.#options.requestIndices[index] as number);
    return `${this.#requestIdPrefix}${globalIndex}`;
  }

  /**
   * With an epoch origin, an open-loop instant is computed on the epoch directly, so that pacers in different threads
   * sharing the origin record bit-identical scheduled times; otherwise it is the monotonic instant on the epoch.
   */
  #scheduledEpochSeconds(index: number, scheduledMs: Milliseconds): number {
    const startAtEpochMs = this.#options.startAtEpochMs;
    if (startAtEpochMs !== undefined && (this.#options.mode ?? { kind: 'open' }).kind === 'open') {
      return (startAtEpochMs + (this.#options.arrivalOffsetsMs[index] as number)) / 1000;
    }
    return this.#options.clock.toEpochSeconds(scheduledMs);
  }

  #settleIfDone(): void {
    if (this.#sendingDone && this.#inFlight === 0 && (this.#cap?.waiting ?? 0) === 0) this.#settle?.();
  }

  #reportProgress(): void {
    const onProgress = this.#options.onProgress;
    if (onProgress === undefined) return;
    onProgress({
      phase: this.#phase,
      total: this.#options.requests.length,
      sent: this.#sent,
      completed: this.#completed,
      failed: this.#failed,
      inFlight: this.#inFlight,
      waitingForConcurrency: this.#cap?.waiting ?? 0,
      elapsedMs: this.#phase === 'warmup' ? 0 : this.#options.clock.nowMs() - this.#t0Ms,
      lastSendLagMs: this.#lastSendLagMs,
    });
  }
}
