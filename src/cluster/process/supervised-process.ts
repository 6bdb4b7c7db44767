import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ServelabError } from '../../errors/servelab-error.js';
import { childEnv } from './child-env.js';
import { LogTail } from './log-tail.js';
import { groupHasLiveMembers } from './process-group.js';
import { watchProcessGroup, unwatchProcessGroup } from './watchdog.js';

export interface SupervisedProcessOptions {
  /** A short name for messages, such as `sim-server 0` or `sglang (GPU 2)`. */
  name: string;
  command: string;
  args: string[];
  /** Default: servelab's environment less the secrets no child needs (childEnv). */
  env?: NodeJS.ProcessEnv;
  /** Where stdout and stderr go, interleaved as the process wrote them. */
  logPath?: string;
  /** How long a SIGTERM may take before SIGKILL. */
  stopGraceMs?: number;
}

/** How long `stop()` waits, after SIGKILL, for the group to be gone before it gives up on it (it stays watched). */
const KILL_WAIT_MS = 5_000;
/** How often `stop()` looks whether the group is gone. */
const GROUP_POLL_MS = 50;
/** How long `stop()` lets the pipes drain into the log once the group is gone. */
const STDIO_DRAIN_MS = 1_000;

/**
 * A process in its own process group, so that stopping it also stops everything it started (SGLang's scheduler and
 * detokenizer, nginx's workers). The group, not the leader, is what is signalled and waited for: a leader that died
 * first can leave children running, holding the port, the GPU and the pipes to our log (which would keep servelab
 * from ever exiting).
 */
export class SupervisedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly tail = new LogTail();
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly logPath: string | undefined;
  #exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  readonly #lineListeners = new Set<(line: string) => void>();
  readonly #log: WriteStream | undefined;
  readonly #stopGraceMs: number;
  #stopping: Promise<void> | undefined;
  /** Set once the group is seen empty: its id may then be reused by someone else's group, never to be signalled. */
  #groupGone = false;
  /** Set when the child's stdout and stderr have both closed (every holder of their write ends is gone). */
  #stdioClosed = false;

  constructor(options: SupervisedProcessOptions) {
    this.name = options.name;
    this.logPath = options.logPath;
    this.#stopGraceMs = options.stopGraceMs ?? 5_000;
    if (options.logPath !== undefined) {
      mkdirSync(dirname(options.logPath), { recursive: true });
      this.#log = createWriteStream(options.logPath, { flags: 'a' });
    }
    // detached: the child leads a new process group; we signal the whole group with kill(-pid).
    this.child = spawn(options.command, options.args, {
      // Never the API key: see childEnv.
      env: options.env ?? childEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const pid = this.child.pid;
    if (pid !== undefined) watchProcessGroup(pid);
    // The first line says which process wrote the log, so a user (or a test) can check it is gone.
    this.#log?.write(`# servelab: pid ${pid ?? 'none'}: ${[options.command, ...options.args].join(' ')}\n`);
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.#exitInfo = { code, signal };
        // The leader alone is gone; the group stays watched (watchdog.ts) while members remain.
        if (pid !== undefined) this.#forgetGroupIfEmpty(pid);
        resolve({ code, signal });
      });
      this.child.once('error', (error) => {
        this.tail.push(`failed to start ${options.command}: ${error.message}\n`);
        this.#exitInfo = { code: -1, signal: null };
        resolve({ code: -1, signal: null });
      });
    });
    this.child.once('close', () => {
      this.#stdioClosed = true;
    });
    const onData = (chunk: Buffer): void => {
      this.#log?.write(chunk);
      for (const line of this.tail.push(chunk.toString('utf8'))) {
        for (const listener of this.#lineListeners) listener(line);
      }
    };
    this.child.stdout?.on('data', onData);
    this.child.stderr?.on('data', onData);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get hasExited(): boolean {
    return this.#exitInfo !== undefined;
  }

  get exitInfo(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.#exitInfo;
  }

  onLine(listener: (line: string) => void): () => void {
    this.#lineListeners.add(listener);
    return () => this.#lineListeners.delete(listener);
  }

  /**
   * Resolves with the match of the first output line matching `pattern`. Rejects with NOT_READY after `timeoutMs`, or
   * PROCESS_EXITED when the process ends first; both errors carry the log tail.
   */
  waitForLine(pattern: RegExp, timeoutMs: number, what: string): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(this.failure('NOT_READY', `${this.name} did not ${what} within ${(timeoutMs / 1000).toFixed(0)} s`));
      }, timeoutMs);
      const removeListener = this.onLine((line) => {
        const match = line.match(pattern);
        if (match !== null) {
          cleanup();
          resolve(match);
        }
      });
      const onExit = (): void => {
        cleanup();
        reject(this.exitFailure(what));
      };
      this.child.once('exit', onExit);
      if (this.hasExited) onExit();
      const cleanup = (): void => {
        clearTimeout(timer);
        removeListener();
        this.child.off('exit', onExit);
      };
    });
  }

  /** An error for a process that ended before it could `what`, with its exit status and log tail. */
  exitFailure(what: string): ServelabError {
    const info = this.#exitInfo ?? { code: this.child.exitCode, signal: this.child.signalCode };
    const status = info.signal !== null && info.signal !== undefined ? `was killed by ${info.signal}` : `exited with code ${info.code ?? 'unknown'}`;
    return this.failure('PROCESS_EXITED', `${this.name} ${status} before it could ${what}`);
  }

  failure(code: 'NOT_READY' | 'PROCESS_EXITED', message: string): ServelabError {
    const tail = this.tail.text().trim();
    const where = this.logPath === undefined ? '' : ` (full log: ${this.logPath})`;
    return new ServelabError(code, `${message}${where}`, {
      details: tail === '' ? 'it printed nothing' : `last lines it printed:\n${indent(tail)}`,
    });
  }

  /** Sends a signal to the whole process group: also after the leader has exited, while members remain. */
  signal(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined || this.#groupGone) return;
    if (this.hasExited && this.#forgetGroupIfEmpty(pid)) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is already gone.
    }
  }

  /**
   * SIGTERM to the group, SIGKILL after the grace period (at once for what remains once the leader has exited: stray
   * members that ignored SIGTERM); resolves once the group is gone, or KILL_WAIT_MS after SIGKILL (what still remains
   * then stays watched: the watchdog kills it when servelab ends). Also when the leader had already exited.
   */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      const pid = this.child.pid;
      if (pid !== undefined && !this.#groupGone) {
        this.signal('SIGTERM');
        if (!this.hasExited) await this.#waitForLeader(this.#stopGraceMs);
        this.signal('SIGKILL');
        await this.#waitForGroupGone(pid, KILL_WAIT_MS);
      }
      // The last lines still in the pipes go to the log first; but a process that left the group and kept our pipes
      // must not keep servelab's event loop alive: after STDIO_DRAIN_MS the pipes are closed on our side.
      await this.#waitForStdioClosed(STDIO_DRAIN_MS);
      this.child.stdout?.destroy();
      this.child.stderr?.destroy();
      await new Promise<void>((resolve) => (this.#log === undefined ? resolve() : this.#log.end(resolve)));
    })();
    return this.#stopping;
  }

  async #waitForStdioClosed(timeoutMs: number): Promise<void> {
    if (this.#stdioClosed) return;
    const controller = new AbortController();
    const closed = new Promise<void>((resolve) => this.child.once('close', () => resolve()));
    await Promise.race([closed, sleep(timeoutMs, undefined, { signal: controller.signal }).catch(() => undefined)]);
    controller.abort();
  }

  async #waitForLeader(timeoutMs: number): Promise<void> {
    const controller = new AbortController();
    await Promise.race([this.exited, sleep(timeoutMs, undefined, { signal: controller.signal }).catch(() => undefined)]);
    controller.abort();
  }

  async #waitForGroupGone(pid: number, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    // The leader's exit is seen through its 'exit' event; its members only by looking.
    if (!this.hasExited) await this.#waitForLeader(timeoutMs);
    while (!this.#forgetGroupIfEmpty(pid) && performance.now() < deadline) await sleep(GROUP_POLL_MS);
  }

  /** True, and the group no longer watched, once the leader has exited and no live member remains. */
  #forgetGroupIfEmpty(pid: number): boolean {
    if (this.#groupGone) return true;
    if (!this.hasExited || groupHasLiveMembers(pid)) return false;
    this.#groupGone = true;
    unwatchProcessGroup(pid);
    return true;
  }
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}
