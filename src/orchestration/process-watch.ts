import type { Clock } from '../clock/clock.js';
import type { ProcessExit } from '../types/cluster.js';
import type { RunEvent, RunNotice } from '../types/run.js';
import type { RunLog } from './run-log.js';

export interface WatchedExit {
  event: RunEvent;
  notice: RunNotice;
}

function howItEnded(exit: ProcessExit): string {
  return exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code ?? 'unknown'}`;
}

/**
 * Watches the processes a run launched (servers, router, taps) while it measures. A death nobody asked for is
 * noticed the moment the child's exit is reported (Node's 'exit' event: well within a second), stamped on the run's
 * clock and handed to `onExit` as an event (`process_exit`, on the run's time axis) and a notice. Deaths the run
 * causes itself (a failure schedule's crash, the teardown at the end) are announced first with `expect` or ended by
 * `stop`, and are not reported.
 */
export class ProcessWatch {
  readonly #clock: Clock;
  readonly #onExit: (exit: WatchedExit) => void;
  readonly #expected = new Set<string>();
  #stopped = false;

  constructor(clock: Clock, onExit: (exit: WatchedExit) => void) {
    this.#clock = clock;
    this.#onExit = onExit;
  }

  /**
   * Watches one process: `name` for messages (`node-1`, `router`, `taps`), `node` its index when it is a server,
   * `placedOn` the machine it ran on by name (a Slurm node) when it was placed on one.
   */
  watch(name: string, exited: Promise<ProcessExit> | undefined, node?: number, placedOn?: string): void {
    if (exited === undefined) return;
    this.#expected.delete(name);
    void exited.then((exit) => {
      if (this.#stopped || this.#expected.has(name)) return;
      const time = this.#clock.nowEpochSeconds();
      const detail = `${name}${placedOn === undefined ? '' : ` on node ${placedOn}`} ${howItEnded(exit)}`;
      this.#onExit({
        event: { time, kind: 'process_exit', ...(node === undefined ? {} : { node }), detail },
        notice: { source: `process:${name}`, time, message: `${detail} during the run; requests that needed it failed from then on` },
      });
    });
  }

  /** The run itself is about to end this process (a scheduled crash): its exit is not news. */
  expect(name: string): void {
    this.#expected.add(name);
  }

  /** The run is over: what exits from now on is the teardown. */
  stop(): void {
    this.#stopped = true;
  }
}

/**
 * The watch a measured test keeps over what it launched: each unasked-for death becomes an event and a notice in the
 * run's log, and with `onProcessExit: 'stop'` it also ends the run early, as an interrupt would, through `signal`
 * (the caller's signal, if any, joined with the watch's own). `stoppedEarly` tells the two apart afterwards.
 */
export function watchRunProcesses(
  clock: Clock,
  log: RunLog,
  onProcessExit: 'continue' | 'stop',
  outerSignal: AbortSignal | undefined,
): { watch: ProcessWatch; signal: AbortSignal; stoppedEarly: () => boolean } {
  const stopEarly = new AbortController();
  const signal = outerSignal === undefined ? stopEarly.signal : AbortSignal.any([outerSignal, stopEarly.signal]);
  const watch = new ProcessWatch(clock, ({ event, notice }) => {
    log.event(event);
    log.notice(onProcessExit === 'stop' ? { ...notice, message: `${notice.message}; the run stopped early (onProcessExit: stop)` } : notice);
    if (onProcessExit === 'stop') stopEarly.abort(new Error(notice.message));
  });
  return { watch, signal, stoppedEarly: () => stopEarly.signal.aborted && outerSignal?.aborted !== true };
}
