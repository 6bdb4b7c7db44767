import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { childEnv } from './child-env.js';

/**
 * Starts a small detached process (`script`, a file beside `moduleUrl`) that holds the read end of a pipe from us: when
 * we die, even by SIGKILL, the kernel closes our end and the process reads end-of-file and cleans up what we told it
 * of through the pipe. The process-group watchdog (watchdog.ts) and the Slurm job watchdog
 * (src/cluster/slurm-jobs/job-watchdog.ts) are two. Undefined when running from sources under a test runner (the
 * caller's exit handler then suffices).
 */
function startPipeWatchdog(script: string, moduleUrl: string, onGone: () => void): ChildProcess | undefined {
  const scriptPath = fileURLToPath(new URL(`./${script}${moduleUrl.endsWith('.ts') ? '.ts' : '.js'}`, moduleUrl));
  if (scriptPath.endsWith('.ts')) return undefined;
  // Never the API key (childEnv): the watchdog outlives nothing it needs a secret for, and a child's environment can
  // be read by any process of the same user.
  const watchdog = spawn(process.execPath, [scriptPath], { stdio: ['pipe', 'ignore', 'ignore'], detached: true, env: childEnv() });
  watchdog.unref();
  // The pipe must not keep our event loop alive.
  (watchdog.stdin as Socket | null)?.unref();
  // A watchdog killed from outside (scancel signals every process of a job, the watchdog included) closes the pipe,
  // and the next write fails with EPIPE: that must not end the run. The exit handler still stops what remains.
  watchdog.stdin?.on('error', () => undefined);
  watchdog.on('error', onGone);
  return watchdog;
}

/**
 * What servelab registers with a pipe watchdog (process groups, Slurm jobs): each id is sent to the watchdog as `+id`
 * when added and `-id` when removed (registration-lines.ts reads them), and `onExit` gets those still registered when
 * this process exits normally, since an exit handler is all that runs then and the watchdog only acts on our death.
 * The watchdog starts with the first id.
 */
export class PipeWatchdogRegistry<Id extends string | number> {
  readonly #ids = new Set<Id>();
  readonly #script: string;
  readonly #moduleUrl: string;
  readonly #onExit: (ids: readonly Id[]) => void;
  #watchdog: ChildProcess | undefined;
  #exitHandlerInstalled = false;

  constructor(script: string, moduleUrl: string, onExit: (ids: readonly Id[]) => void) {
    this.#script = script;
    this.#moduleUrl = moduleUrl;
    this.#onExit = onExit;
  }

  add(id: Id): void {
    this.#ids.add(id);
    if (!this.#exitHandlerInstalled) {
      this.#exitHandlerInstalled = true;
      process.on('exit', () => {
        if (this.#ids.size > 0) this.#onExit([...this.#ids]);
      });
    }
    this.#watchdog ??= startPipeWatchdog(this.#script, this.#moduleUrl, () => {
      this.#watchdog = undefined;
    });
    this.#watchdog?.stdin?.write(`+${id}\n`);
  }

  remove(id: Id): void {
    this.#ids.delete(id);
    this.#watchdog?.stdin?.write(`-${id}\n`);
  }
}
