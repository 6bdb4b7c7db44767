import { Worker } from 'node:worker_threads';
import { clockAnchorEnv } from '../../clock/clock.js';
import { ServelabError } from '../../errors/servelab-error.js';
import type { LoadProgress, LoadResult } from '../../types/load.js';
import type { RequestRecord } from '../../types/record.js';
import type { FromLoadWorkerMessage, LoadWorkerData, ToLoadWorkerMessage } from './worker-messages.js';

/**
 * The main thread's side of one load worker thread. `ready` and `finished` reject with a ServelabError naming the
 * worker if it fails first (an error it reports, an uncaught exception, or an exit without a result), so that a
 * crashed worker never leaves the run waiting.
 */
export class LoadWorkerHandle {
  readonly index: number;
  readonly ready: Promise<void>;
  readonly finished: Promise<LoadResult>;
  readonly #worker: Worker;
  readonly #name: string;
  #settled = false;
  #resolveReady!: () => void;
  #rejectReady!: (error: ServelabError) => void;
  #resolveFinished!: (result: LoadResult) => void;
  #rejectFinished!: (error: ServelabError) => void;

  constructor(scriptPath: string, data: LoadWorkerData, onProgress: (progress: LoadProgress) => void, onRecords?: (records: RequestRecord[]) => void) {
    this.index = data.workerIndex;
    this.#name = `load worker ${data.workerIndex} of ${data.workerCount}`;
    this.ready = new Promise<void>((resolve, reject) => {
      this.#resolveReady = resolve;
      this.#rejectReady = reject;
    });
    this.finished = new Promise<LoadResult>((resolve, reject) => {
      this.#resolveFinished = resolve;
      this.#rejectFinished = reject;
    });
    // Whoever awaits only one of the two must not leave the other as an unhandled rejection.
    this.ready.catch(() => undefined);
    this.finished.catch(() => undefined);
    this.#worker = new Worker(scriptPath, {
      workerData: data,
      // The thread's systemClock takes this thread's anchor instead of measuring its own: the pacers of all threads
      // stamp on one epoch (clock.ts, CLOCK_ANCHOR_ENV).
      env: { ...process.env, ...clockAnchorEnv() },
      transferList: [data.arrivalOffsetsMs.buffer as ArrayBuffer, data.requestIndices.buffer as ArrayBuffer],
    });
    this.#worker.on('message', (message: FromLoadWorkerMessage) => {
      if (message.type === 'ready') this.#resolveReady();
      else if (message.type === 'progress') onProgress(message.progress);
      else if (message.type === 'records') onRecords?.(message.records);
      else if (message.type === 'result') {
        this.#settled = true;
        this.#resolveReady();
        this.#resolveFinished(message.result);
        void this.#worker.terminate();
      } else this.#fail(new ServelabError(message.code ?? 'INTERNAL', `${this.#name}: ${message.message}`));
    });
    this.#worker.on('error', (error) => {
      this.#fail(new ServelabError('INTERNAL', `${this.#name} crashed: ${error.message}`, { cause: error }));
    });
    this.#worker.on('exit', (code) => {
      this.#fail(new ServelabError('PROCESS_EXITED', `${this.#name} stopped (exit code ${code}) before it returned its records`));
    });
  }

  start(startAtEpochMs: number): void {
    this.#send({ type: 'start', startAtEpochMs });
  }

  /** Interrupts the worker's run: it aborts what is in flight and still returns its records. */
  abort(): void {
    this.#send({ type: 'abort' });
  }

  /** Stops the thread at once (its records are lost): for a run that has already failed. */
  async terminate(): Promise<void> {
    this.#fail(new ServelabError('INTERRUPTED', `${this.#name} was stopped before it returned its records`));
    await this.#worker.terminate();
  }

  #send(message: ToLoadWorkerMessage): void {
    if (!this.#settled) this.#worker.postMessage(message);
  }

  #fail(error: ServelabError): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#rejectReady(error);
    this.#rejectFinished(error);
    void this.#worker.terminate();
  }
}
