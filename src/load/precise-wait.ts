import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { readsPerformanceNow, type Clock } from '../clock/clock.js';
import type { Milliseconds } from '../types/time.js';

/**
 * When the instant is this close after a wake-up, the waiter reads the clock in a tight loop instead of sleeping
 * again: a sleep on the thread costs two thread wake-ups (tens of microseconds of CPU), more than this much spinning.
 */
const SPIN_BELOW_MS: Milliseconds = 0.03;
/** The longest `ready` waits for the timer thread to start. */
const READY_TIMEOUT_MS: Milliseconds = 1000;

/** Cells of the shared control block (Int32 indices). */
const GENERATION = 0; // raised by the main thread when it hands the thread a new schedule, or closes it
const FIRED = 1; // raised by the thread each time instants of the schedule have come
const STOP = 2; // 1 once the waiter is closed
const CURSOR = 3; // the main thread's next unsent index in the schedule
const CONTROL_BYTES = 16;

/**
 * The timer thread. It is handed a whole schedule at once (an origin and one offset per instant, through a message
 * port it reads synchronously), and walks it by itself: it sleeps in `Atomics.wait` (fractional milliseconds, woken
 * within tens of microseconds) until the next instant not yet sent by the main thread (CURSOR), raises FIRED and
 * notifies it, which resolves the main thread's `Atomics.waitAsync`, and goes on to the next instant. So a send costs
 * one wake-up of each thread, and the main thread never has to wake the timer thread: no message, no copy and no
 * allocation per instant on either side. Instants due together are fired once.
 *
 * Instants are on the main thread's `performance.now()` scale: the thread converts through both threads'
 * `performance.timeOrigin` (the main thread re-checks its own clock on every wake-up, so an error in that conversion
 * can make a wake-up late, never a send early). Written as a CommonJS string so that it runs the same from the
 * TypeScript sources (tests) and from the build.
 */
const TIMER_THREAD_SOURCE = `
const { workerData, receiveMessageOnPort } = require('node:worker_threads');
const control = new Int32Array(workerData.shared);
const port = workerData.port;
const toMainMs = performance.timeOrigin - workerData.mainTimeOrigin;
let offsets;
let originMs = 0;
let lastFired = -1;
for (;;) {
  if (Atomics.load(control, ${STOP}) === 1) break;
  const generation = Atomics.load(control, ${GENERATION});
  for (let message = receiveMessageOnPort(port); message !== undefined; message = receiveMessageOnPort(port)) {
    offsets = message.message.offsetsMs;
    originMs = message.message.originMs;
    lastFired = -1;
  }
  const index = offsets === undefined ? Infinity : Math.max(Atomics.load(control, ${CURSOR}), lastFired + 1);
  if (offsets === undefined || !(index < offsets.length)) {
    Atomics.wait(control, ${GENERATION}, generation);
    continue;
  }
  const nowMs = toMainMs + performance.now();
  const remainingMs = originMs + offsets[index] - nowMs;
  if (remainingMs > 0) {
    Atomics.wait(control, ${GENERATION}, generation, remainingMs);
    continue;
  }
  lastFired = index;
  while (lastFired + 1 < offsets.length && originMs + offsets[lastFired + 1] <= nowMs) lastFired++;
  Atomics.add(control, ${FIRED}, 1);
  Atomics.notify(control, ${FIRED});
}
`;

/** `Atomics.waitAsync` (Node 16+, ES2024): typed here because the project's `lib` predates it. */
type WaitAsync = (array: Int32Array, index: number, value: number) => { async: boolean; value: Promise<string> | string };
const waitAsync = (Atomics as unknown as { waitAsync?: WaitAsync }).waitAsync;

interface TimerThread {
  worker: Worker;
  control: Int32Array;
  port: MessagePort;
}

/**
 * Waits for absolute instants on the real clock without drifting and without burning a core.
 *
 * The open loop hands the waiter its whole schedule (`follow`) and then waits for one instant after another
 * (`waitForInstant`); a timer thread walks the schedule (see TIMER_THREAD_SOURCE) and wakes the event loop through
 * shared memory at each instant: one wake-up per instant (or per group of instants due together), no spinning while
 * the instant is further than SPIN_BELOW_MS away, and the event loop free for sockets and streams meanwhile. The
 * wake-up comes tens of microseconds after the instant on an idle core (never before it); the caller releases
 * everything due by then at once (see open-loop.ts), so a late wake-up makes sends late, never the schedule.
 *
 * Without the thread (it failed to start, or a clock that does not read `performance.now()`, such as a test's manual clock)
 * sleeps use Node's timers for whole milliseconds and yield to the event loop turn by turn for the rest. An abort
 * wakes the wait at once. Call `close` when done (the thread keeps the process alive only while a schedule is being
 * followed or a wait is pending).
 */
export class PreciseWaiter {
  readonly #clock: Clock;
  readonly #signal: AbortSignal | undefined;
  #thread: TimerThread | undefined;
  #threadOnline = false;
  #threadStarted: Promise<void> = Promise.resolve();
  /** Resolves the pending wait (thread or timer) early: abort, close, or the thread failed. */
  #wake: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #originMs: Milliseconds = 0;
  #offsetsMs: Float64Array = new Float64Array(0);
  /** Whether the timer thread walks the schedule given to `follow` (else waits use timers). */
  #threadFollows = false;
  /**
   * The signal's state, kept in a plain field: the hot loops read it instead of `AbortSignal.aborted`, whose getter
   * saw signals of different shapes from one run to the next and threw the optimised code away each run.
   */
  #aborted = false;

  /** Whether the clock moves by itself (reads `performance.now()`): only then may a wait spin on it. */
  readonly #realClock: boolean;

  /** Starts the timer thread at once (unless `timerThread: false` or the clock does not read `performance.now()`). */
  constructor(clock: Clock, signal?: AbortSignal, options: { timerThread?: boolean } = {}) {
    this.#clock = clock;
    this.#realClock = readsPerformanceNow(clock);
    this.#signal = signal;
    this.#aborted = signal?.aborted === true;
    signal?.addEventListener(
      'abort',
      () => {
        this.#aborted = true;
        this.#wakeNow();
      },
      { once: true },
    );
    if ((options.timerThread ?? true) && readsPerformanceNow(clock) && waitAsync !== undefined) this.#startThread();
  }

  /** Whether the timer thread has started and takes sleeps (false until then, and without a thread). */
  get timerThreadRunning(): boolean {
    return this.#threadOnline;
  }

  /** Whether sleeps run (or will run, once it has started) on the timer thread. */
  get usesTimerThread(): boolean {
    return this.#thread !== undefined;
  }

  /**
   * Resolves once sleeps run on the timer thread and one sleep has gone through it (at once without a thread; at most
   * a second). Why wait: the thread takes tens of milliseconds of CPU to start, and when the client has one core, a
   * schedule that begins meanwhile loses that time to it. The round trip also warms the wake-up path.
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
      if (this.#threadOnline && !this.#aborted) await Promise.race([this.waitUntil(this.#clock.nowMs() + 0.1), deadline]);
    } finally {
      clearTimeout(timer);
      if (onAbort !== undefined) this.#signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Hands the waiter a schedule: instant i is `originMs + offsetsMs[i]` on the clock (offsets non-decreasing). Replaces
   * any schedule given before.
   */
  follow(originMs: Milliseconds, offsetsMs: Float64Array): void {
    this.#originMs = originMs;
    this.#offsetsMs = offsetsMs;
    const thread = this.#threadOnline ? this.#thread : undefined;
    this.#threadFollows = thread !== undefined;
    if (thread === undefined) return;
    Atomics.store(thread.control, CURSOR, 0);
    thread.port.postMessage({ originMs, offsetsMs });
    Atomics.add(thread.control, GENERATION, 1);
    Atomics.notify(thread.control, GENERATION);
    thread.worker.ref();
  }

  /**
   * Resolves when instant `index` of the schedule has come (or just after, never before), or as soon as the signal
   * aborts. Also tells the timer thread that every instant before `index` has been dealt with.
   */
  async waitForInstant(index: number): Promise<void> {
    const clock = this.#clock;
    const targetMs = this.#originMs + (this.#offsetsMs[index] as number);
    const thread = this.#threadFollows ? this.#thread : undefined;
    if (thread !== undefined) Atomics.store(thread.control, CURSOR, index);
    for (;;) {
      if (this.#aborted) return;
      // FIRED is read before the clock: a fire for this instant that lands in between is caught by the clock check.
      const fired = thread === undefined ? 0 : Atomics.load(thread.control, FIRED);
      const remainingMs = targetMs - clock.nowMs();
      if (remainingMs <= 0) return;
      if (remainingMs < SPIN_BELOW_MS && this.#realClock) {
        while (clock.nowMs() < targetMs) {
          // A few microseconds at most: nothing else could run in so short a time anyway.
        }
        return;
      }
      if (thread !== undefined && this.#thread === thread) await this.#awaitFire(thread, fired);
      // Node's timers take whole milliseconds (0 means 1) and may fire a millisecond early or late.
      else if (remainingMs >= 2) await this.#sleepOnTimer(Math.floor(remainingMs - 1));
      else await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /** Resolves at `targetMs` on the clock (or just after, never before), or as soon as the signal aborts. */
  async waitUntil(targetMs: Milliseconds): Promise<void> {
    this.follow(targetMs, new Float64Array(1));
    try {
      await this.waitForInstant(0);
    } finally {
      this.#unfollow();
    }
  }

  /** Stops the timer thread. */
  close(): void {
    const thread = this.#thread;
    this.#thread = undefined;
    this.#threadOnline = false;
    this.#threadFollows = false;
    if (thread !== undefined) {
      Atomics.store(thread.control, STOP, 1);
      Atomics.add(thread.control, GENERATION, 1);
      Atomics.notify(thread.control, GENERATION);
      // Wakes a pending `Atomics.waitAsync`, so that nothing waits on a thread that is gone.
      Atomics.add(thread.control, FIRED, 1);
      Atomics.notify(thread.control, FIRED);
      thread.port.close();
      void thread.worker.terminate();
    }
    this.#wakeNow();
  }

  /** The schedule is done with: the thread goes idle and stops keeping the process alive. */
  #unfollow(): void {
    const thread = this.#thread;
    if (thread === undefined || !this.#threadFollows) return;
    this.#threadFollows = false;
    Atomics.store(thread.control, CURSOR, 0x7fffffff);
    thread.worker.unref();
  }

  #startThread(): void {
    try {
      const shared = new SharedArrayBuffer(CONTROL_BYTES);
      const channel = new MessageChannel();
      const worker = new Worker(TIMER_THREAD_SOURCE, {
        eval: true,
        workerData: { shared, port: channel.port2, mainTimeOrigin: performance.timeOrigin },
        transferList: [channel.port2],
      });
      worker.unref();
      channel.port1.unref();
      this.#threadStarted = new Promise<void>((resolve) => {
        worker.once('online', () => {
          this.#threadOnline = this.#thread !== undefined;
          resolve();
        });
        worker.on('error', () => {
          // Without the thread the waiter falls back to Node's timers.
          this.#thread = undefined;
          this.#threadOnline = false;
          this.#threadFollows = false;
          this.#wakeNow();
          resolve();
        });
      });
      this.#thread = { worker, control: new Int32Array(shared), port: channel.port1 };
    } catch {
      this.#thread = undefined;
    }
  }

  /** Resolves when FIRED moves on from `fired` (or at once if it already has), or early on abort or close. */
  #awaitFire(thread: TimerThread, fired: number): Promise<void> {
    const { control } = thread;
    return new Promise<void>((resolve) => {
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        this.#wake = undefined;
        resolve();
      };
      this.#wake = finish;
      const waiting = (waitAsync as WaitAsync)(control, FIRED, fired);
      if (waiting.async) void (waiting.value as Promise<string>).then(finish);
      else finish();
    });
  }

  #sleepOnTimer(durationMs: Milliseconds): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#wake = resolve;
      this.#timer = setTimeout(() => this.#wakeNow(), durationMs);
    });
  }

  /** Ends the current sleep early (abort, close, or the thread failed). */
  #wakeNow(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
