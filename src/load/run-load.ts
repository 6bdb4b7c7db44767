import { randomBytes } from 'node:crypto';
import { ServelabError } from '../errors/servelab-error.js';
import type { ClientOutcome, RequestRecord } from '../types/record.js';
import type { ClosedLoopMode, LoadProgress, LoadResult, RunLoadOptions } from '../types/load.js';
import type { Milliseconds } from '../types/time.js';
import type { WorkloadRequest } from '../types/workload.js';
import { checkConcurrencyStages, totalStageDurationS, usersAt } from './concurrency-stages.js';
import { PreciseWaiter } from './precise-wait.js';
import { buildRequestRecord, NEVER_SENT_OUTCOME, outcomeFromThrow } from './request-record.js';

const PROGRESS_INTERVAL_MS = 250;
/**
 * Most requests released in one turn of the event loop when many are due at once (an infinite rate, or catching up
 * after a stall): between batches the loop yields so that the requests already sent can write their bytes.
 */
const MAX_RELEASE_BATCH = 128;

/**
 * Offers a workload to a client and records every request's lifecycle.
 *
 * Open loop (the default): request i is handed to the client at its absolute instant `t0 + arrivalOffsetsMs[i]`,
 * whatever is still in flight: no request waits for another to finish. The schedule is absolute: when a timer fires
 * late or the client falls behind, due requests go out at once and later instants are not shifted; each record keeps
 * its `scheduledTime` so the lag shows as `arrivalTime - scheduledTime` instead of being silently measured from a
 * late send. Closed loop: `mode.concurrency` users each send the next request when their previous one finishes.
 *
 * Never throws for a failed request (a failure is a record). Resolves once every sent request has finished; an
 * abort stops sending, aborts what is in flight and resolves with `interrupted: true`.
 */
export async function runLoad(options: RunLoadOptions): Promise<LoadResult> {
  validateRunLoadOptions(options);
  return new LoadRun(options).execute();
}

/** Checks the options `runLoad` would reject, so that a caller splitting a run can fail before it starts anything. */
export function validateRunLoadOptions(options: Omit<RunLoadOptions, 'client'>): void {
  const mode = options.mode ?? { kind: 'open' };
  if (options.startAtEpochMs !== undefined && !Number.isFinite(options.startAtEpochMs)) {
    throw new ServelabError('INVALID_CONFIG', `startAtEpochMs must be a finite epoch time in milliseconds, got ${options.startAtEpochMs}`);
  }
  if (options.requestIndices !== undefined && options.requestIndices.length !== options.requests.length) {
    throw new ServelabError(
      'INVALID_CONFIG',
      `requestIndices has ${options.requestIndices.length} entries for ${options.requests.length} requests; give one per request`,
    );
  }
  if (options.maxConcurrency !== undefined && !(Number.isInteger(options.maxConcurrency) && options.maxConcurrency >= 1)) {
    throw new ServelabError('INVALID_CONFIG', `maxConcurrency must be a whole number of at least 1, got ${options.maxConcurrency}`);
  }
  if (mode.kind === 'closed') {
    if (mode.stages !== undefined) checkConcurrencyStages(mode.stages);
    else if (!(Number.isInteger(mode.concurrency) && mode.concurrency >= 1)) {
      throw new ServelabError('INVALID_CONFIG', `closed-loop concurrency must be a whole number of at least 1, got ${mode.concurrency}`);
    }
    const thinkTimeMs = mode.thinkTimeMs ?? 0;
    if (!(thinkTimeMs >= 0 && Number.isFinite(thinkTimeMs))) {
      throw new ServelabError('INVALID_CONFIG', `think time must be a finite number of at least 0 ms, got ${thinkTimeMs}`);
    }
    return;
  }
  const offsetsMs = options.arrivalOffsetsMs;
  if (offsetsMs.length !== options.requests.length) {
    throw new ServelabError(
      'INVALID_CONFIG',
      `the arrival schedule has ${offsetsMs.length} instants for ${options.requests.length} requests; build it with one per request`,
    );
  }
  let previousMs = 0;
  for (let index = 0; index < offsetsMs.length; index++) {
    const offsetMs = offsetsMs[index] as number;
    if (!(offsetMs >= previousMs) || !Number.isFinite(offsetMs)) {
      throw new ServelabError(
        'INVALID_CONFIG',
        `arrival offset ${index} (${offsetMs} ms) is not a finite number at or after the previous one; offsets must be non-decreasing from 0`,
      );
    }
    previousMs = offsetMs;
  }
}

class LoadRun {
  readonly #options: RunLoadOptions;
  readonly #abortController = new AbortController();
  /** Open loop only: waits for each request's instant. */
  #waiter: PreciseWaiter | undefined;
  readonly #requestIdPrefix: string;
  readonly #records: (RequestRecord | undefined)[];
  readonly #warmupRecords: RequestRecord[] = [];
  /** Scheduled instant of each measured request on the monotonic clock (NaN until its instant comes). */
  readonly #scheduledMs: Float64Array;
  readonly #heldForConcurrency: Uint8Array;
  /** Requests whose instant came while `maxConcurrency` requests were in flight, in arrival order. */
  readonly #waitingQueue: number[] = [];
  #waitingHead = 0;
  #phase: LoadProgress['phase'] = 'warmup';
  #t0Ms: Milliseconds = 0;
  #sent = 0;
  #completed = 0;
  #failed = 0;
  #inFlight = 0;
  #lastSendLagMs: Milliseconds = 0;
  #sendingDone = false;
  #settle: (() => void) | undefined;

  constructor(options: RunLoadOptions) {
    this.#options = options;
    this.#requestIdPrefix = options.requestIdPrefix ?? `servelab-${randomBytes(4).toString('hex')}-`;
    this.#records = new Array<RequestRecord | undefined>(options.requests.length);
    this.#scheduledMs = new Float64Array(options.requests.length).fill(Number.NaN);
    this.#heldForConcurrency = new Uint8Array(options.requests.length);
    // Registered first, so that every other abort listener already sees the flag set.
    this.#abortController.signal.addEventListener('abort', () => (this.#aborted = true), { once: true });
  }

  /** Whether the run was aborted: a plain field for the hot loops (see PreciseWaiter's field of the same name). */
  #aborted = false;

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
    if (mode.kind === 'open') this.#waiter = new PreciseWaiter(clock, this.#abortController.signal);
    const startAtEpochMs = this.#options.startAtEpochMs;
    try {
      await this.#runWarmup();
      // The schedule's origin is set only once the pacer's timer thread runs (see PreciseWaiter.ready).
      await this.#waiter?.ready();
      this.#phase = 'measured';
      // A given origin is on the epoch (it may come from another thread, whose monotonic scale differs): this clock's
      // own epoch anchor turns it into a reading on its monotonic scale.
      this.#t0Ms = startAtEpochMs === undefined ? clock.nowMs() : startAtEpochMs - clock.toEpochSeconds(0) * 1000;
      this.#options.onStart?.(startAtEpochMs === undefined ? clock.toEpochSeconds(this.#t0Ms) : startAtEpochMs / 1000);
      const settled = new Promise<void>((resolve) => (this.#settle = resolve));
      // Node's timers can fire up to a millisecond early: sleep again until the origin has really come.
      while (mode.kind === 'closed' && startAtEpochMs !== undefined && !this.#aborted && clock.nowMs() < this.#t0Ms) {
        await sleepUnlessAborted(Math.ceil(this.#t0Ms - clock.nowMs()), this.#abortController.signal);
      }
      if (mode.kind === 'closed') await this.#runClosedLoop(mode);
      else await this.#runOpenLoop(this.#waiter as PreciseWaiter);
      this.#sendingDone = true;
      this.#settleIfDone();
      await settled;
    } finally {
      signal?.removeEventListener('abort', forwardAbort);
      if (progressTimer !== undefined) clearInterval(progressTimer);
      this.#waiter?.close();
    }
    this.#phase = 'done';
    this.#reportProgress();
    return {
      records: this.#records.filter((record): record is RequestRecord => record !== undefined),
      warmupRecords: this.#warmupRecords,
      startTime: startAtEpochMs === undefined ? clock.toEpochSeconds(this.#t0Ms) : startAtEpochMs / 1000,
      endTime: clock.nowEpochSeconds(),
      interrupted: this.#aborted,
    };
  }

  async #runWarmup(): Promise<void> {
    const { clock, client, warmupRequests } = this.#options;
    for (let index = 0; index < warmupRequests.length; index++) {
      if (this.#aborted) return;
      const workload = warmupRequests[index] as WorkloadRequest;
      const requestId = `${this.#requestIdPrefix}warmup-${index}`;
      const scheduledTime = clock.nowEpochSeconds();
      let outcome: ClientOutcome;
      // Each warmup request has its own signal: the run's abort cancels it, and so does the warmup deadline.
      const warmupAbort = new AbortController();
      const forwardRunAbort = (): void => warmupAbort.abort();
      this.#abortController.signal.addEventListener('abort', forwardRunAbort, { once: true });
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
        this.#abortController.signal.removeEventListener('abort', forwardRunAbort);
      }
      if (timedOut && !this.#aborted && !outcome.success) {
        outcome = {
          ...outcome,
          error: 'total_timeout',
          errorMessage: `the warmup request got no complete answer within the warmup timeout of ${timeoutMs} ms (setting warmupTimeoutMs)`,
        };
      }
      this.#warmupRecords.push(
        buildRequestRecord(workload, { requestId, warmup: true, scheduledTime, dispatchTime: scheduledTime, heldForConcurrency: false }, outcome),
      );
    }
  }

  async #runOpenLoop(waiter: PreciseWaiter): Promise<void> {
    const { clock, arrivalOffsetsMs } = this.#options;
    const count = arrivalOffsetsMs.length;
    const t0Ms = this.#t0Ms;
    let next = 0;
    while (next < count && !this.#aborted) {
      const targetMs = t0Ms + (arrivalOffsetsMs[next] as number);
      if (clock.nowMs() < targetMs) {
        await waiter.waitUntil(targetMs);
        continue;
      }
      // Release everything already due: after a late wake-up the backlog goes out at once, at its original instants.
      const nowMs = clock.nowMs();
      let released = 0;
      while (next < count && t0Ms + (arrivalOffsetsMs[next] as number) <= nowMs && released < MAX_RELEASE_BATCH) {
        this.#arrive(next, t0Ms + (arrivalOffsetsMs[next] as number));
        next++;
        released++;
      }
      if (released === MAX_RELEASE_BATCH) await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /**
   * Closed loop: each user sends, waits for the answer, thinks, and sends the next request until none remain. With
   * stages, a ticker sets how many users are active; users above that count pause after their current request.
   */
  async #runClosedLoop(mode: ClosedLoopMode): Promise<void> {
    const { clock, requests } = this.#options;
    const thinkTimeMs = mode.thinkTimeMs ?? 0;
    const stages = mode.stages;
    const userCount = Math.min(
      stages === undefined ? mode.concurrency : Math.max(...stages.map((stage) => stage.concurrency)),
      requests.length,
    );
    const endMs = stages === undefined ? Infinity : this.#t0Ms + totalStageDurationS(stages) * 1000;
    const activeUsers = (): number => (stages === undefined ? userCount : usersAt(stages, (clock.nowMs() - this.#t0Ms) / 1000));
    const pausedUsers = new Map<number, () => void>();
    const wakeActive = (): void => {
      const active = clock.nowMs() >= endMs || this.#aborted ? userCount : activeUsers();
      for (const [user, wake] of pausedUsers) {
        if (user < active) {
          pausedUsers.delete(user);
          wake();
        }
      }
    };
    // Stage changes are checked every 10 ms: finer than any sensible stage, coarse enough to cost nothing.
    const ticker = stages === undefined ? undefined : setInterval(wakeActive, 10);
    const onAbort = (): void => wakeActive();
    this.#abortController.signal.addEventListener('abort', onAbort, { once: true });
    let next = 0;
    const runUser = async (user: number): Promise<void> => {
      let firstRequest = true;
      while (!this.#aborted && next < requests.length && clock.nowMs() < endMs) {
        if (user >= activeUsers()) {
          await new Promise<void>((resolve) => pausedUsers.set(user, resolve));
          firstRequest = true;
          continue;
        }
        if (!firstRequest && thinkTimeMs > 0) {
          // Each user sleeps on its own timer; think times are long next to timer error, so no precise tail is needed.
          await sleepUnlessAborted(thinkTimeMs, this.#abortController.signal);
          if (this.#aborted || clock.nowMs() >= endMs) return;
        }
        firstRequest = false;
        const index = next++;
        if (index >= requests.length) return;
        await this.#dispatch(index, clock.nowMs(), false);
      }
    };
    try {
      await Promise.all(Array.from({ length: userCount }, (_, user) => runUser(user)));
    } finally {
      if (ticker !== undefined) clearInterval(ticker);
      this.#abortController.signal.removeEventListener('abort', onAbort);
    }
  }

  #arrive(index: number, scheduledMs: Milliseconds): void {
    const maxConcurrency = this.#options.maxConcurrency;
    if (maxConcurrency !== undefined && this.#inFlight >= maxConcurrency) {
      this.#scheduledMs[index] = scheduledMs;
      this.#heldForConcurrency[index] = 1;
      this.#waitingQueue.push(index);
      return;
    }
    void this.#dispatch(index, scheduledMs, false);
  }

  /** Hands one request to the client; resolves when its record is written. */
  #dispatch(index: number, scheduledMs: Milliseconds, held: boolean): Promise<void> {
    const { clock, client, requests } = this.#options;
    const workload = requests[index] as WorkloadRequest;
    const requestId = this.#requestIdOf(index);
    const dispatchMs = clock.nowMs();
    this.#scheduledMs[index] = scheduledMs;
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
      const record = buildRequestRecord(
        workload,
        {
          requestId,
          warmup: false,
          scheduledTime: this.#scheduledEpochSeconds(index, scheduledMs),
          dispatchTime: clock.toEpochSeconds(dispatchMs),
          heldForConcurrency: held,
        },
        outcome,
      );
      this.#records[index] = record;
      this.#emit(record);
      this.#inFlight--;
      this.#completed++;
      if (!outcome.success) this.#failed++;
      this.#releaseWaiting();
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

  /** A slot freed up: the longest-waiting held request goes out now, its scheduled instant unchanged. */
  #releaseWaiting(): void {
    const maxConcurrency = this.#options.maxConcurrency;
    if (maxConcurrency === undefined || this.#aborted) return;
    while (this.#waitingHead < this.#waitingQueue.length && this.#inFlight < maxConcurrency) {
      const index = this.#waitingQueue[this.#waitingHead++] as number;
      void this.#dispatch(index, this.#scheduledMs[index] as number, true);
    }
  }

  /** After an interrupt, requests whose instant came but that were still held back get an `aborted` record. */
  #recordNeverSent(): void {
    const { requests } = this.#options;
    while (this.#waitingHead < this.#waitingQueue.length) {
      const index = this.#waitingQueue[this.#waitingHead++] as number;
      const record = buildRequestRecord(
        requests[index] as WorkloadRequest,
        {
          requestId: this.#requestIdOf(index),
          warmup: false,
          scheduledTime: this.#scheduledEpochSeconds(index, this.#scheduledMs[index] as number),
          heldForConcurrency: this.#heldForConcurrency[index] === 1,
        },
        NEVER_SENT_OUTCOME,
      );
      this.#records[index] = record;
      this.#emit(record);
      this.#completed++;
      this.#failed++;
    }
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
    if (this.#sendingDone && this.#inFlight === 0 && this.#waitingHead >= this.#waitingQueue.length) this.#settle?.();
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
      waitingForConcurrency: this.#waitingQueue.length - this.#waitingHead,
      elapsedMs: this.#phase === 'warmup' ? 0 : this.#options.clock.nowMs() - this.#t0Ms,
      lastSendLagMs: this.#lastSendLagMs,
    });
  }
}

function sleepUnlessAborted(durationMs: Milliseconds, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(finish, durationMs);
    function finish(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', finish);
      resolve();
    }
    signal.addEventListener('abort', finish, { once: true });
  });
}
