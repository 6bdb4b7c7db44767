import { constants } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PlacedProcess, ProcessExit } from '../../../types/cluster.js';
import type { SupervisedProcess } from '../../process/supervised-process.js';
import { slurmCommand } from './slurm-commands.js';
import { STEP_LINE } from './step-wrapper.js';

/**
 * A bound on a wait that never keeps servelab alive by itself: the race it is in ends first in the ordinary case, and
 * a timer still pending then must not hold the process for seconds at exit (srun itself keeps it alive meanwhile).
 */
function wait(ms: number): Promise<undefined> {
  return sleep(ms, undefined, { ref: false });
}

/** How long stop() waits for a step that srun has not started yet before it stops srun itself. */
const STEP_START_WAIT_MS = 10_000;
/** How long stop() waits, after SIGKILL to the step, for srun to report it gone. */
const KILL_WAIT_MS = 5_000;
/** How long the exit waits for srun's last lines once srun has exited. */
const OUTPUT_DRAIN_MS = 1_000;
/** srun's line for a task that ended: `srun: error: n2: task 0: Killed`, or `... task 0: Exited with exit code 3`. */
const TASK_END_LINE = /^srun: error: \S+: task \d+: (.+)$/;

/**
 * One job step, seen through the placement interface. `srun` runs on this host (a SupervisedProcess, so the watchdog
 * ends it if servelab dies) and carries the step's output into the log; the step itself is signalled and cancelled by
 * its id with scancel, which reaches every process of the step on its node.
 */
export class SlurmProcess implements PlacedProcess {
  readonly pid = undefined;
  readonly exited: Promise<ProcessExit>;
  /** Resolves with the step's id once the step printed it, or undefined when srun ended before the step started. */
  readonly #stepStarted: Promise<string | undefined>;
  #stepId: string | undefined;
  #node: string | undefined;
  #taskEnd: string | undefined;
  #exit: ProcessExit | undefined;
  #signals: Promise<void> = Promise.resolve();
  #stopping: Promise<void> | undefined;

  constructor(
    private readonly srun: SupervisedProcess,
    readonly host: string,
    private readonly slurmEnv: NodeJS.ProcessEnv,
    private readonly stopGraceMs: number,
  ) {
    let removeListener: () => void = () => undefined;
    this.#stepStarted = new Promise((resolve) => {
      removeListener = srun.onLine((line) => {
        const step = STEP_LINE.exec(line);
        if (step !== null && this.#stepId === undefined) {
          this.#stepId = step[1];
          this.#node = step[2];
          resolve(this.#stepId);
        }
        const taskEnd = TASK_END_LINE.exec(line);
        if (taskEnd !== null) this.#taskEnd = taskEnd[1];
      });
      void srun.exited.then(() => resolve(this.#stepId));
    });
    // srun's last lines (which say how the task ended) may come after its exit: its pipes' close is waited for, briefly.
    const closed = new Promise<void>((resolve) => srun.child.once('close', () => resolve()));
    this.exited = srun.exited.then(async (exit) => {
      await Promise.race([closed, wait(OUTPUT_DRAIN_MS)]);
      removeListener();
      this.#exit = this.#stepExit(exit);
      return this.#exit;
    });
  }

  get name(): string {
    return this.srun.name;
  }

  /** `step 12.3` once the step runs; until then (or when it never started) the local srun's process id. */
  get id(): string {
    return this.#stepId === undefined ? `srun pid ${this.srun.pid ?? 'none'}` : `step ${this.#stepId}`;
  }

  /** The Slurm node the step runs on, as the step itself reported it (SLURMD_NODENAME); undefined until it starts. */
  get node(): string | undefined {
    return this.#node;
  }

  get logPath(): string | undefined {
    return this.srun.logPath;
  }

  get hasExited(): boolean {
    return this.#exit !== undefined;
  }

  logTail(): string {
    return this.srun.tail.text();
  }

  waitForLine(pattern: RegExp, timeoutMs: number, what: string): Promise<RegExpMatchArray> {
    return this.srun.waitForLine(pattern, timeoutMs, what);
  }

  exitFailure(what: string): Error {
    return this.srun.exitFailure(what);
  }

  failure(code: 'NOT_READY' | 'PROCESS_EXITED', message: string): Error {
    return this.srun.failure(code, message);
  }

  /**
   * `scancel --signal SIG JOBID.STEPID`: every process of the step gets it (SIGSTOP and SIGCONT hang and resume a
   * server, SIGKILL crashes it). Signals go out in the order they were asked for, once the step has started.
   */
  signal(signal: NodeJS.Signals): void {
    this.#signals = this.#signals.then(async () => {
      const step = await this.#stepStarted;
      if (step === undefined || this.hasExited) return;
      await this.#scancel(step, signal);
    });
  }

  /** SIGTERM to the step, SIGKILL after the grace period; then srun's last lines reach the log. Safe to call twice. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      if (!this.hasExited) {
        const step = await Promise.race([this.#stepStarted, wait(STEP_START_WAIT_MS)]);
        if (step !== undefined && !this.hasExited) {
          await this.#signals;
          await this.#scancel(step, 'SIGTERM');
          await Promise.race([this.exited, wait(this.stopGraceMs)]);
          if (!this.hasExited) {
            await this.#scancel(step, 'SIGKILL');
            await Promise.race([this.exited, wait(KILL_WAIT_MS)]);
          }
        }
      }
      // srun itself: gone already when the step ended; stopped here when the step never started.
      await this.srun.stop();
    })();
    return this.#stopping;
  }

  async #scancel(step: string, signal: NodeJS.Signals): Promise<void> {
    // A step that ended meanwhile makes scancel fail: there is nothing left to signal, which is what was wanted.
    await slurmCommand('scancel', ['--quiet', `--signal=${signal.replace(/^SIG/, '')}`, step], this.slurmEnv).catch(() => undefined);
  }

  /**
   * srun exits 128 + N when the step's task was ended by signal N (and says so: `task 0: Killed`); the exit is then
   * reported as that signal, as a local process's would be. A task that exited with a code keeps it.
   */
  #stepExit(exit: ProcessExit): ProcessExit {
    const code = exit.code;
    if (code === null || code <= 128 || this.#taskEnd === undefined || /^Exited with exit code/.test(this.#taskEnd)) return exit;
    const signal = Object.entries(constants.signals).find(([, number]) => number === code - 128)?.[0] as NodeJS.Signals | undefined;
    return signal === undefined ? exit : { code: null, signal };
  }
}
