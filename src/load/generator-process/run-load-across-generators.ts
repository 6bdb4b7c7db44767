import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Agent } from 'undici';
import { loadProtocolClient } from '../../clients/registry.js';
import { servelabCliPath } from '../../cluster/process/cli-entry.js';
import { ServelabError } from '../../errors/servelab-error.js';
import { newControlToken } from '../../routing/router/control-auth.js';
import type { GeneratorLoadOptions, LoadProgress, LoadResult } from '../../types/load.js';
import type { RequestRecord } from '../../types/record.js';
import type { Milliseconds } from '../../types/time.js';
import type { WorkloadRequest } from '../../types/workload.js';
import { partitionRoundRobin, splitCap, type WorkloadShare } from '../multi-worker/partition-requests.js';
import { ProgressAggregator } from '../multi-worker/progress-aggregator.js';
import { validateRunLoadOptions } from '../validate-load-options.js';
import { runWarmupOnly } from '../warmup-only.js';
import { GeneratorHandle, type StreamEnd } from './generator-handle.js';
import type { GeneratorStart } from './generator-protocol.js';
import { unfinishedRecord } from './unfinished-record.js';

const PROGRESS_INTERVAL_MS = 250;
const DEFAULT_START_LEAD_MS: Milliseconds = 1_000;
const DEFAULT_READY_TIMEOUT_MS: Milliseconds = 30_000;
const DEFAULT_CLOCK_EXCHANGE_INTERVAL_MS: Milliseconds = 2_000;
/** Exchanges at the start and at the end: the tightest of a few bounds the offset to about half the best round trip. */
const EDGE_EXCHANGES = 8;
/** After a generator's process ended, how long its last records may take to arrive before its stream is given up. */
const EXIT_GRACE_MS = 1_000;
/** After an abort, how long generators may take to send their last records before they are given up. */
const ABORT_GRACE_MS = 10_000;
/**
 * Periodic clock exchanges in a row that a generator may leave unanswered (each waits 2.5 intervals, 5 s by default)
 * before it is taken for hung
 * (stopped, SIGSTOP, its host gone without its process ending): it is then stopped and given up as lost, so that a
 * generator that neither answers nor dies cannot hold the run forever.
 */
const UNANSWERED_EXCHANGES_LIMIT = 3;

/**
 * `runLoad` spread over load-generator processes, on this host or others (`--client-nodes`). The one seeded schedule is
 * dealt round robin into disjoint slices (partition-requests.ts), each generator runs its slice through its own pacer
 * and client from one common start instant `t0`, and streams its records as they finish. Same result as the in-process
 * path: the records in workload order, ids `${prefix}${index}`, scheduled times exactly `(t0 + offset) / 1000`.
 *
 * Clocks: each generator's clock is measured against this one by NTP-style exchanges at the start, every
 * `clockExchangeIntervalMs` while the load runs, and at the end (generator-clock.ts). `t0` is sent on this clock with
 * the offset measured so far; every generator-stamped instant of a record is moved onto this clock by the final fit
 * (and by the fit so far for the record handed to `onRecord` as it arrives).
 *
 * Records first: each record reaches `onRecord` as it arrives. A generator whose process ends before finishing its
 * slice is reported through `onGeneratorLost` at once, and every request of its slice without a record gets an
 * `aborted` record: nothing scheduled goes missing, and the run goes on. A generator that cannot start, or that
 * cannot run its slice (its client does not load), fails the run with a ServelabError after every generator is stopped.
 * An abort stops every generator's sending; what they had in flight comes back as `aborted` records.
 */
export async function runLoadAcrossGenerators(options: GeneratorLoadOptions): Promise<LoadResult> {
  validateRunLoadOptions(options);
  const generatorCount = Math.min(options.generators, Math.max(options.requests.length, 1));
  validateGeneratorOptions(options, generatorCount);
  return new GeneratorRun(options, generatorCount).execute();
}

function validateGeneratorOptions(options: GeneratorLoadOptions, generatorCount: number): void {
  if (!(Number.isInteger(options.generators) && options.generators >= 1)) {
    throw new ServelabError('INVALID_CONFIG', `client nodes (load generators) must be a whole number of at least 1, got ${options.generators}`);
  }
  if (options.mode?.kind === 'closed') {
    throw new ServelabError('INVALID_CONFIG', 'a closed loop (concurrency or user stages) runs in one load generator: its pace is set by the answers; set client nodes to 1');
  }
  if (options.maxConcurrency !== undefined && options.maxConcurrency < generatorCount) {
    throw new ServelabError('INVALID_CONFIG', `maxConcurrency ${options.maxConcurrency} cannot be split over ${generatorCount} load generators; use at most ${options.maxConcurrency}`);
  }
  if (options.nodes !== undefined && options.nodes.length === 0) {
    throw new ServelabError('INVALID_CONFIG', 'the client node list is empty; give at least one node, or leave it out for the placement\'s default');
  }
}

interface GeneratorState {
  handle: GeneratorHandle;
  share: WorkloadShare;
  /** Ends the records stream: the process ended (after a grace period) or the run gave up waiting. */
  streamAbort: AbortController;
  /** Periodic clock exchanges left unanswered in a row. */
  unanswered: number;
  end?: StreamEnd;
  /** Set when the generator was found lost (its process ended before its stream did, or its stream was given up). */
  lostAt?: number;
}

class GeneratorRun {
  readonly #options: GeneratorLoadOptions;
  readonly #count: number;
  readonly #requestIdPrefix: string;
  readonly #aggregator: ProgressAggregator;
  readonly #warmupAbort = new AbortController();
  readonly #dispatcher = new Agent({ bodyTimeout: 0, headersTimeout: 30_000, keepAliveTimeout: 60_000, connections: 4 });
  readonly #controlToken = newControlToken();
  #states: GeneratorState[] = [];
  #phase: LoadProgress['phase'] = 'warmup';
  #t0EpochMs = 0;
  #t0Ms: Milliseconds = 0;
  #started = false;
  #stopping = false;

  constructor(options: GeneratorLoadOptions, count: number) {
    this.#options = options;
    this.#count = count;
    this.#requestIdPrefix = options.requestIdPrefix ?? `servelab-${randomBytes(4).toString('hex')}-`;
    this.#aggregator = new ProgressAggregator(options.requests.length, count);
  }

  async execute(): Promise<LoadResult> {
    const { clock, signal, onProgress } = this.#options;
    const onAbort = (): void => {
      this.#warmupAbort.abort();
      if (this.#started) void this.#abortAll();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted === true) this.#warmupAbort.abort();
    const progressTimer = onProgress === undefined ? undefined : setInterval(() => this.#reportProgress(), PROGRESS_INTERVAL_MS);
    progressTimer?.unref();
    let exchangeTimer: NodeJS.Timeout | undefined;
    try {
      const warmup = this.#runWarmup();
      try {
        await this.#launchAll();
        await Promise.all(this.#states.map((state) => exchangeRepeatedly(state.handle, EDGE_EXCHANGES)));
      } catch (error) {
        this.#warmupAbort.abort();
        await warmup.catch(() => undefined);
        throw error;
      }
      // The streams are open from here on, also while the warmup runs: a generator takes a coordinator that keeps no
      // stream open and sends nothing for a minute for gone (generator-service.ts), and a warmup can take longer.
      this.#watchExits();
      const streams = this.#states.map((state, index) => this.#follow(state, index));
      const warmupRecords = await warmup;
      if (signal?.aborted === true) {
        this.#phase = 'done';
        const nowS = clock.nowEpochSeconds();
        return { records: [], warmupRecords, startTime: nowS, endTime: nowS, interrupted: true, loadGenerators: this.#reports() };
      }
      const bodies = this.#states.map((state, index) => this.#startBody(state.share, index));
      this.#t0EpochMs = Math.ceil(clock.nowEpochSeconds() * 1000 + (this.#options.startLeadMs ?? DEFAULT_START_LEAD_MS));
      this.#t0Ms = this.#t0EpochMs - clock.toEpochSeconds(0) * 1000;
      this.#phase = 'measured';
      this.#started = true;
      this.#options.onStart?.(this.#t0EpochMs / 1000);
      await Promise.all(
        this.#states.map((state, index) =>
          state.handle.start(this.#withStartInstant(bodies[index] as string, state.handle)).catch((error: unknown) => {
            // One that died meanwhile is a lost generator (its exit is reported, its slice recorded as aborted); one
            // that is alive and refused its slice is a fault of the run.
            if (!state.handle.process.hasExited) throw error;
          }),
        ),
      );
      // An abort that came while the start messages were on their way reaches the generators now.
      if (this.#aborted()) void this.#abortAll();
      exchangeTimer = this.#exchangePeriodically();
      await Promise.all(streams);
      clearInterval(exchangeTimer);
      await Promise.all(this.#states.filter((state) => !state.handle.process.hasExited).map((state) => exchangeRepeatedly(state.handle, EDGE_EXCHANGES).catch(() => undefined)));
      this.#phase = 'done';
      return this.#result(warmupRecords);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      if (progressTimer !== undefined) clearInterval(progressTimer);
      if (exchangeTimer !== undefined) clearInterval(exchangeTimer);
      this.#stopping = true;
      for (const state of this.#states) state.streamAbort.abort();
      await Promise.all(this.#states.map((state) => state.handle.stop().catch(() => undefined)));
      await this.#dispatcher.destroy().catch(() => undefined);
      if (this.#phase === 'done') this.#reportProgress();
    }
  }

  /** Read through a call: the abort may come while an await is pending, which flow analysis cannot see. */
  #aborted(): boolean {
    return this.#options.signal?.aborted === true;
  }

  /** Starts every generator; if one fails to start, the others are stopped and its error is the run's. */
  async #launchAll(): Promise<void> {
    const { placement, nodes, logsPath, clock } = this.#options;
    const cliPath = servelabCliPath();
    const shares = partitionRoundRobin(this.#options.requests, this.#options.arrivalOffsetsMs, this.#count);
    const launches = await Promise.allSettled(
      shares.map((_, index) =>
        GeneratorHandle.launch({
          placement,
          node: nodes === undefined ? undefined : nodes[index % nodes.length],
          index,
          cliPath,
          controlToken: this.#controlToken,
          ...(logsPath === undefined ? {} : { logPath: join(logsPath, `load-generator-${index}.log`) }),
          readyTimeoutMs: this.#options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS,
          dispatcher: this.#dispatcher,
          clock,
        }),
      ),
    );
    this.#states = launches.flatMap((launch, index) =>
      launch.status === 'fulfilled' ? [{ handle: launch.value, share: shares[index] as WorkloadShare, streamAbort: new AbortController(), unanswered: 0 }] : [],
    );
    const failed = launches.find((launch): launch is PromiseRejectedResult => launch.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  }

  async #runWarmup(): Promise<RequestRecord[]> {
    const { warmupRequests } = this.#options;
    if (warmupRequests.length === 0) return [];
    const client = this.#options.client ?? (await loadProtocolClient(this.#options.clientSpec.protocol, { ...this.#options.clientSpec.options, clock: this.#options.clock }));
    try {
      return await runWarmupOnly({
        warmupRequests,
        warmupTimeoutMs: this.#options.warmupTimeoutMs,
        client,
        clock: this.#options.clock,
        signal: this.#warmupAbort.signal,
        requestIdPrefix: this.#requestIdPrefix,
        ...(this.#options.maxConcurrency === undefined ? {} : { maxConcurrency: this.#options.maxConcurrency }),
      });
    } finally {
      if (this.#options.client === undefined) await client.close().catch(() => undefined);
    }
  }

  /** A generator whose process ends before its stream does is lost: reported at once, its stream given up after a grace. */
  #watchExits(): void {
    for (const state of this.#states) {
      void state.handle.process.exited.then((exit) => {
        if (this.#stopping || state.end?.kind === 'done' || state.end?.kind === 'failed') return;
        const how = exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code ?? 'unknown'}`;
        this.#reportLoss(state, `${state.handle.label} ${how} before it finished its slice of the schedule`);
        setTimeout(() => state.streamAbort.abort(), EXIT_GRACE_MS).unref();
      });
    }
  }

  /** Once per generator: an event on the run's time axis, through onGeneratorLost. */
  #reportLoss(state: GeneratorState, what: string): void {
    if (state.lostAt !== undefined) return;
    state.lostAt = this.#options.clock.nowEpochSeconds();
    this.#options.onGeneratorLost?.({
      time: state.lostAt,
      generator: state.handle.label,
      detail: `${what}; its requests without a record are recorded as aborted`,
    });
  }

  async #follow(state: GeneratorState, index: number): Promise<void> {
    const onRecord = this.#options.onRecord;
    state.end = await state.handle.followRecords(
      (raw) => {
        if (onRecord === undefined) return;
        try {
          onRecord(this.#corrected(raw, state.handle));
        } catch {
          // The record is kept regardless; the listener reports its own failures.
        }
      },
      (progress) => this.#aggregator.update(index, progress),
      state.streamAbort.signal,
    );
    // A stream given up while its process still runs (it could not be taken up again): the generator would go on
    // sending requests nobody records, so it is stopped and its slice's missing records become aborted ones.
    if (state.end.kind === 'lost' && !this.#stopping && !state.handle.process.hasExited) {
      this.#reportLoss(state, `${state.handle.label} stopped delivering records (${state.end.reason}) and was stopped`);
      await state.handle.stop().catch(() => undefined);
    }
  }

  /** The start message less its start instant, serialised ahead so that the time it takes is not lost from the lead. */
  #startBody(share: WorkloadShare, index: number): string {
    const { clientSpec, maxConcurrency } = this.#options;
    const maxConnections = clientSpec.options.maxConnections;
    const body: Omit<GeneratorStart, 'startAtCoordinatorEpochMs' | 'clockOffsetMs'> = {
      clientSpec: {
        protocol: clientSpec.protocol,
        options: { ...clientSpec.options, ...(maxConnections === undefined ? {} : { maxConnections: splitCap(maxConnections, this.#count, index) }) },
      },
      workers: 1,
      requests: share.requests,
      arrivalOffsetsMs: Array.from(share.arrivalOffsetsMs),
      requestIndices: Array.from(share.requestIndices),
      requestIdPrefix: this.#requestIdPrefix,
      ...(maxConcurrency === undefined ? {} : { maxConcurrency: splitCap(maxConcurrency, this.#count, index) }),
    };
    return JSON.stringify(body);
  }

  #withStartInstant(body: string, handle: GeneratorHandle): string {
    const clockOffsetMs = handle.clock.offsetMsAt(this.#t0EpochMs / 1000);
    return `{"startAtCoordinatorEpochMs":${this.#t0EpochMs},"clockOffsetMs":${clockOffsetMs},${body.slice(1)}`;
  }

  /**
   * One exchange with each live generator every interval, never two at once with the same generator. One that leaves
   * UNANSWERED_EXCHANGES_LIMIT in a row unanswered is hung: it is reported lost, stopped, and its stream given up.
   */
  #exchangePeriodically(): NodeJS.Timeout {
    const busy = new Set<GeneratorHandle>();
    const intervalMs = this.#options.clockExchangeIntervalMs ?? DEFAULT_CLOCK_EXCHANGE_INTERVAL_MS;
    const timer = setInterval(() => {
      for (const state of this.#states) {
        const handle = state.handle;
        if (busy.has(handle) || handle.process.hasExited || state.end !== undefined || state.lostAt !== undefined) continue;
        busy.add(handle);
        void handle
          .exchangeClock(2.5 * intervalMs)
          .then(
            () => (state.unanswered = 0),
            () => {
              state.unanswered++;
              if (state.unanswered < UNANSWERED_EXCHANGES_LIMIT || this.#stopping || state.end !== undefined) return;
              this.#reportLoss(state, `${handle.label} left ${state.unanswered} clock exchanges in a row unanswered (hung?) and was stopped`);
              state.streamAbort.abort();
              void handle.stop().catch(() => undefined);
            },
          )
          .finally(() => busy.delete(handle));
      }
    }, intervalMs);
    timer.unref();
    return timer;
  }

  /** Interrupts every generator; one that does not deliver its last records within the grace period is given up. */
  async #abortAll(): Promise<void> {
    setTimeout(() => {
      for (const state of this.#states) state.streamAbort.abort();
    }, ABORT_GRACE_MS).unref();
    await Promise.all(this.#states.map((state) => state.handle.abort().catch(() => undefined)));
  }

  /** A generator's record on this clock: its own instants moved by its clock's offset, the scheduled time exact. */
  #corrected(raw: RequestRecord, handle: GeneratorHandle): RequestRecord {
    const record = handle.clock.correct(raw);
    const index = this.#indexOf(raw);
    record.scheduledTime = (this.#t0EpochMs + (this.#options.arrivalOffsetsMs[index] as number)) / 1000;
    return record;
  }

  #indexOf(record: RequestRecord): number {
    const index = Number(record.requestId.slice(this.#requestIdPrefix.length));
    if (!record.requestId.startsWith(this.#requestIdPrefix) || !Number.isInteger(index) || index < 0 || index >= this.#options.requests.length) {
      throw new ServelabError('INTERNAL', `a load generator returned a record with an unexpected id "${record.requestId}"; this is a bug in servelab`);
    }
    return index;
  }

  #result(warmupRecords: RequestRecord[]): LoadResult {
    const failed = this.#states.find((state) => state.end?.kind === 'failed');
    if (failed !== undefined && failed.end?.kind === 'failed') {
      throw new ServelabError('PROCESS_EXITED', `${failed.handle.label} could not run its slice of the schedule: ${failed.end.failed.message}`);
    }
    const byIndex = new Array<RequestRecord | undefined>(this.#options.requests.length);
    let interrupted = this.#options.signal?.aborted === true;
    let endTime = this.#t0EpochMs / 1000;
    for (const state of this.#states) {
      for (const raw of state.handle.rawRecords) byIndex[this.#indexOf(raw)] = this.#corrected(raw, state.handle);
      const end = state.end;
      if (end?.kind === 'done') {
        interrupted ||= end.done.interrupted;
        endTime = Math.max(endTime, state.handle.clock.toCoordinator(end.done.endTime));
        continue;
      }
      // Lost: every request of its slice without a record is recorded as aborted, placed in time where it was lost.
      this.#reportLoss(state, `${state.handle.label} stopped delivering records (${end?.kind === 'lost' ? end.reason : 'no stream'})`);
      const lostAt = state.lostAt ?? this.#options.clock.nowEpochSeconds();
      endTime = Math.max(endTime, lostAt);
      for (let local = 0; local < state.share.requests.length; local++) {
        const index = state.share.requestIndices[local] as number;
        if (byIndex[index] !== undefined) continue;
        const record = unfinishedRecord(state.share.requests[local] as WorkloadRequest, {
          requestId: `${this.#requestIdPrefix}${index}`,
          scheduledTime: (this.#t0EpochMs + (this.#options.arrivalOffsetsMs[index] as number)) / 1000,
          lostAt,
          why: `${state.handle.label} ended before it delivered this request's record (${end?.kind === 'lost' ? end.reason : 'no stream'}): it may or may not have been sent`,
        });
        byIndex[index] = record;
        try {
          this.#options.onRecord?.(record);
        } catch {
          // Kept in the result regardless.
        }
      }
    }
    return {
      records: byIndex.filter((record): record is RequestRecord => record !== undefined),
      warmupRecords,
      startTime: this.#t0EpochMs / 1000,
      endTime: Math.max(endTime, this.#t0EpochMs / 1000),
      interrupted,
      loadGenerators: this.#reports(),
    };
  }

  #reports(): NonNullable<LoadResult['loadGenerators']> {
    return this.#states.map((state) => {
      const received = state.handle.rawRecords.length;
      const lost = state.end === undefined || state.end.kind === 'done' ? undefined : state.end.kind === 'lost' ? state.end.reason : state.end.failed.message;
      return {
        name: state.handle.name,
        ...(state.handle.node === undefined ? {} : { node: state.handle.node }),
        url: state.handle.url,
        requests: state.share.requests.length,
        recordsReceived: received,
        recordsLost: lost === undefined ? 0 : state.share.requests.length - received,
        ...(lost === undefined ? {} : { lost }),
        clock: state.handle.clock.estimate(),
      };
    });
  }

  #reportProgress(): void {
    const elapsedMs = this.#phase === 'warmup' ? 0 : this.#options.clock.nowMs() - this.#t0Ms;
    this.#options.onProgress?.(this.#aggregator.snapshot(this.#phase, elapsedMs));
  }
}

async function exchangeRepeatedly(handle: GeneratorHandle, times: number): Promise<void> {
  for (let exchange = 0; exchange < times; exchange++) await handle.exchangeClock();
}
