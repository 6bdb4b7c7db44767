import { Worker } from 'node:worker_threads';
import type { Clock } from '../clock/clock.js';
import type { Milliseconds } from '../types/time.js';

/** Bounds of the stretch before an instant that is spent watching the clock (the tail) instead of sleeping. */
const MIN_TAIL_MS: Milliseconds = 0.1;
const MAX_TAIL_MS: Milliseconds = 1.5;
/** Safety added to the observed wake-up lateness. */
const TAIL_SAFETY_MS: Milliseconds = 0.05;
/** Which percentile of recent wake-up lateness the tail covers. */
const TAIL_PERCENTILE = 0.9;
/**
 * The tail's garbage. Every clock reading allocates (`performance.now()` returns a heap number), and so does every
 * turn's `setImmediate`. Read as fast as possible, the tail made 150–300 MB of garbage a second — more than half of
 * all the process allocated at 5,000 req/s — and the young-generation collector then paused the loop for about a
 * millisecond every few tens of milliseconds, delaying sends. So the tail reads the clock about every 2.5 µs (a
 * counted pause loop between readings, tuned as it runs) and yields to the event loop every 10 µs: precise to a few
 * microseconds, with a socket event arriving meanwhile waiting at most 10 µs for its turn.
 */
const SPIN_SLICE_MS: Milliseconds = 0.01;
const TARGET_READINGS_PER_SLICE = 4;
const MAX_PAUSE_ITERATIONS = 1 << 20;
const MAX_READINGS_PER_TURN = 200;
/** How many recent wake-ups the lateness estimate looks at. */
const LATENESS_SAMPLES = 64;
/** The longest `ready` waits for the timer thread to start. */
const READY_TIMEOUT_MS: Milliseconds = 1000;

/**
 * The timer thread: it sleeps in `Atomics.wait`, which takes fractional milliseconds and wakes within tens of
 * microseconds, then posts a message that wakes the main event loop. Written as a CommonJS string so that it runs the
 * same from the TypeScript sources (tests) and from the build. Storing 1 in the cell and notifying it ends a sleep early.
 */
const TIMER_THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const cell = new Int32Array(workerData);
parentPort.on('message', (delayMs) => {
  Atomics.wait(cell, 0, 0, delayMs);
  Atomics.store(cell, 0, 0);
  parentPort.postMessage(0);
});
`;

/**
 * Waits for absolute instants on a real-time clock without drifting and without burning a core.
 *
 * The bulk of a wait sleeps: on a small timer thread (`Atomics.wait`, sub-millisecond precision, no CPU) when one can
 * be started, else on Node's timers. The last stretch (the tail) watches the clock, yielding every 10 µs through
 * `setImmediate` so that sockets and streams keep running, until the instant. On the thread the tail is sized from the measured lateness of
 * recent wake-ups (90th percentile of the last 64, plus a safety margin, within 0.1–1.5 ms): short on an idle machine,
 * longer on a busy one; a higher percentile would chase the rare multi-millisecond stalls of a busy machine with a
 * core's worth of spinning, and no tail can cover those anyway. Node's timers have whole-millisecond granularity and
 * fire up to a millisecond early or late, so with them the tail stays at 1.5 ms.
 *
 * Instants are absolute, so a wake-up that comes late makes this wait shorter, never the next one later. An abort
 * wakes the wait at once. Call `close` when done (the timer thread never keeps the process alive meanwhile).
 */
export class PreciseWaiter {
  readonly #clock: Clock;
  readonly #signal: AbortSignal | undefined;
  readonly #latenessMs = new Float64Array(LATENESS_SAMPLES).fill(MAX_TAIL_MS);
  #latenessCount = 0;
  #tailMs: Milliseconds = MAX_TAIL_MS;
  #wake: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #thread: { worker: Worker; cell: Int32Array } | undefined;
  /** Set once the thread has started; until then (tens of milliseconds) sleeps use Node's timers. */
  #threadOnline = false;
  /** Settles when the thread is online or has failed. */
  #threadStarted: Promise<void> = Promise.resolve();
  readonly #tailPercentile: number;
  /**
   * The signal's state, kept in a plain field: the hot loops read it instead of `AbortSignal.aborted`, whose getter
   * saw signals of different shapes from one run to the next and threw the optimised code away each run (the
   * recompilations then ran on the client's core, in the middle of the schedule).
   */
  #aborted = false;
  /** Iterations of the pause loop between two clock readings in the tail (see SPIN_SLICE_MS). */
  #pauseIterations = 64;
  /** Where the pause loop's result goes, so that the compiler cannot drop the loop. */
  #pauseSink = 0;

  /** Starts the timer thread at once (unless `timerThread: false`), so that it is ready by the first wait. */
  constructor(clock: Clock, signal?: AbortSignal, options: { timerThread?: boolean; tailPercentile?: number } = {}) {
    this.#clock = clock;
    this.#signal = signal;
    this.#tailPercentile = options.tailPercentile ?? TAIL_PERCENTILE;
    this.#aborted = signal?.aborted === true;
    signal?.addEventListener(
      'abort',
      () => {
        this.#aborted = true;
        this.#interrupt();
      },
      { once: true },
    );
    if (options.timerThread !== false) this.#startThread();
  }

  /** The current length of the precise tail: adaptive on the timer thread, the widest on Node's coarser timers. */
  get tailMs(): Milliseconds {
    return this.#threadOnline ? this.#tailMs : MAX_TAIL_MS;
  }

  /** Whether the timer thread has started and takes sleeps (false until then, and without a thread). */
  get timerThreadRunning(): boolean {
    return this.#threadOnline;
  }

  /** Whether sleeps run on the timer thread (else on Node's timers). */
  get usesTimerThread(): boolean {
    return this.#thread !== undefined;
  }

  /**
   * Resolves once sleeps run on the timer thread and one sleep has gone through it (at once without a thread; at most
   * a second). Why wait: the thread takes tens of milliseconds of CPU to start, and when the client has one core, a
   * schedule that begins meanwhile loses that time to it — at 1,000 req/s that start-up alone made a quarter to half of
   * the run's dispatches later than 0.5 ms (bench/load-precision.ts). The round trip also warms the wake-up path.
   */
  async ready(): Promise<void> {
    if (this.#aborted) return;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, READY_TIMEOUT_MS);
      onAbort = resolve;
      this.#signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([this.#threadStarted, deadline]);
      const thread = this.#threadOnline ? this.#thread : undefined;
      if (thread !== undefined && !this.#aborted) await Promise.race([this.#sleepOnThread(thread, 0.01), deadline]);
    } finally {
      clearTimeout(timer);
      if (onAbort !== undefined) this.#signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Resolves at `targetMs` on the clock (or just after), or as soon as the signal aborts. */
  async waitUntil(targetMs: Milliseconds): Promise<void> {
    for (;;) {
      if (this.#aborted) return;
      const remainingMs = targetMs - this.#clock.nowMs();
      if (remainingMs <= 0) return;
      const sleepMs = remainingMs - this.tailMs;
      const thread = this.#threadOnline ? this.#thread : undefined;
      if (thread !== undefined && sleepMs > 0.05) await this.#sleepOnThread(thread, sleepMs);
      // Node's timers take whole milliseconds (0 means 1): use them only when a whole millisecond fits.
      else if (thread === undefined && sleepMs >= 1) await this.#sleepOnTimer(Math.floor(sleepMs));
      else await this.#yieldUntil(targetMs);
    }
  }

  /**
   * The tail: in each turn of the event loop, clock readings spaced by the pause loop for up to SPIN_SLICE_MS, then a
   * yield so that sockets and streams run, until the instant. Callbacks rather than a promise per turn, for the same
   * reason as the spacing: garbage (see SPIN_SLICE_MS).
   */
  #yieldUntil(targetMs: Milliseconds): Promise<void> {
    const clock = this.#clock;
    return new Promise<void>((resolve) => {
      const check = (): void => {
        if (this.#aborted) return resolve();
        let nowMs = clock.nowMs();
        const sliceEndMs = nowMs + SPIN_SLICE_MS;
        let readings = 1;
        while (nowMs < targetMs) {
          // The reading cap keeps a clock that does not move by itself (a test's manual clock) from spinning forever.
          if (nowMs >= sliceEndMs || readings >= MAX_READINGS_PER_TURN) {
            if (nowMs >= sliceEndMs) this.#tunePause(readings);
            setImmediate(check);
            return;
          }
          this.#pauseSink = pause(this.#pauseIterations, this.#pauseSink);
          nowMs = clock.nowMs();
          readings++;
        }
        resolve();
      };
      setImmediate(check);
    });
  }

  /**
   * After a whole slice: keeps the tail's clock readings near TARGET_READINGS_PER_SLICE a slice whatever the speed of
   * the pause loop (JIT tiers, CPUs).
   */
  #tunePause(readings: number): void {
    if (readings > TARGET_READINGS_PER_SLICE * 2) this.#pauseIterations = Math.min(this.#pauseIterations * 2, MAX_PAUSE_ITERATIONS);
    else if (readings < TARGET_READINGS_PER_SLICE / 2) this.#pauseIterations = Math.max(this.#pauseIterations >> 1, 1);
  }

  /** Stops the timer thread. */
  close(): void {
    this.#interrupt();
    void this.#thread?.worker.terminate();
    this.#thread = undefined;
    this.#threadOnline = false;
  }

  #startThread(): void {
    try {
      const shared = new SharedArrayBuffer(4);
      const worker = new Worker(TIMER_THREAD_SOURCE, { eval: true, workerData: shared });
      worker.unref();
      this.#threadStarted = new Promise<void>((resolve) => {
        worker.once('online', () => {
          this.#threadOnline = this.#thread !== undefined;
          resolve();
        });
        worker.on('error', () => {
          // Without the thread the waiter falls back to Node's timers.
          this.#thread = undefined;
          this.#threadOnline = false;
          this.#wakeNow();
          resolve();
        });
      });
      worker.on('message', () => this.#wakeNow());
      this.#thread = { worker, cell: new Int32Array(shared) };
    } catch {
      this.#thread = undefined;
    }
  }

  #sleepOnThread(thread: { worker: Worker }, durationMs: Milliseconds): Promise<void> {
    const wakeAtMs = this.#clock.nowMs() + durationMs;
    return new Promise<void>((resolve) => {
      this.#wake = () => {
        this.#recordLateness(this.#clock.nowMs() - wakeAtMs);
        resolve();
      };
      thread.worker.postMessage(durationMs);
    });
  }

  #sleepOnTimer(durationMs: Milliseconds): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#wake = resolve;
      this.#timer = setTimeout(() => this.#wakeNow(), durationMs);
    });
  }

  #recordLateness(latenessMs: Milliseconds): void {
    this.#latenessMs[this.#latenessCount % LATENESS_SAMPLES] = Math.max(latenessMs, 0);
    this.#latenessCount++;
    // Re-estimated every 8 wake-ups: sorting 64 numbers is cheap, but there is no need to do it on every one.
    if (this.#latenessCount % 8 !== 0) return;
    const sorted = Float64Array.from(this.#latenessMs).sort();
    const percentile = sorted[Math.floor(this.#tailPercentile * (LATENESS_SAMPLES - 1))] as number;
    this.#tailMs = Math.min(MAX_TAIL_MS, Math.max(MIN_TAIL_MS, percentile + TAIL_SAFETY_MS));
  }

  /** Ends the current sleep early (abort or close). */
  #interrupt(): void {
    const thread = this.#thread;
    if (thread !== undefined) {
      Atomics.store(thread.cell, 0, 1);
      Atomics.notify(thread.cell, 0);
    }
    this.#wakeNow();
  }

  #wakeNow(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

/** A loop that does nothing useful for `iterations` rounds, without allocating: the wait between clock readings. */
function pause(iterations: number, seed: number): number {
  let value = seed;
  for (let index = 0; index < iterations; index++) value = (value * 31 + index) | 0;
  return value;
}
