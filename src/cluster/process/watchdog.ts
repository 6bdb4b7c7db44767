import type { ChildProcess } from 'node:child_process';
import { startPipeWatchdog } from './pipe-watchdog.js';

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
  watchdog ??= startPipeWatchdog('watchdog-main', import.meta.url, () => {
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
