import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { childEnv } from './child-env.js';

/**
 * Makes sure no launched process outlives servelab, even when servelab itself is killed with SIGKILL (which no handler
 * can catch). A small watchdog process holds the read end of a pipe from us; when we die, the kernel closes our end,
 * the watchdog reads end-of-file and kills every process group we registered. While we live, normal teardown removes
 * groups as they exit, and an `exit` handler kills what remains.
 */
const watchedGroups = new Set<number>();
let watchdog: ChildProcess | undefined;
let exitHandlerInstalled = false;

function ensureWatchdog(): ChildProcess | undefined {
  if (watchdog !== undefined) return watchdog;
  const scriptPath = fileURLToPath(new URL(`./watchdog-main${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url));
  if (scriptPath.endsWith('.ts')) return undefined; // Running from sources under a test runner: the exit handler suffices.
  // Never the API key (childEnv): the watchdog outlives nothing it needs a secret for, and a child's environment can
  // be read by any process of the same user.
  watchdog = spawn(process.execPath, [scriptPath], { stdio: ['pipe', 'ignore', 'ignore'], detached: true, env: childEnv() });
  watchdog.unref();
  // The pipe must not keep our event loop alive.
  (watchdog.stdin as Socket | null)?.unref();
  // A watchdog killed from outside (scancel signals every process of a job, the watchdog included) closes the pipe,
  // and the next write fails with EPIPE: that must not end the run. The exit handler still stops what remains.
  watchdog.stdin?.on('error', () => undefined);
  watchdog.on('error', () => {
    watchdog = undefined;
  });
  return watchdog;
}

function installExitHandler(): void {
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  process.on('exit', () => {
    for (const pgid of watchedGroups) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  });
}

export function watchProcessGroup(pgid: number): void {
  watchedGroups.add(pgid);
  installExitHandler();
  ensureWatchdog()?.stdin?.write(`+${pgid}\n`);
}

export function unwatchProcessGroup(pgid: number): void {
  watchedGroups.delete(pgid);
  watchdog?.stdin?.write(`-${pgid}\n`);
}
