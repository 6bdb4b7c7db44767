import { spawnSync, type ChildProcess } from 'node:child_process';
import { startPipeWatchdog } from '../process/pipe-watchdog.js';

/**
 * Makes sure no job servelab submitted outlives it: the jobs' counterpart of the process-group watchdog
 * (src/cluster/process/watchdog.ts), on the same principle. A small detached process holds the read end of a pipe
 * from us; when we die, even by SIGKILL, the kernel closes our end and the watchdog runs `scancel` on every job still
 * registered. While we live, a job is dropped when it ends, and an `exit` handler cancels what remains.
 */
const watchedJobs = new Set<string>();
let watchdog: ChildProcess | undefined;
let exitHandlerInstalled = false;

function ensureWatchdog(): ChildProcess | undefined {
  watchdog ??= startPipeWatchdog('job-watchdog-main', import.meta.url, () => {
    watchdog = undefined;
  });
  return watchdog;
}

function installExitHandler(): void {
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  process.on('exit', () => {
    if (watchedJobs.size === 0) return;
    // Synchronous: an exit handler cannot wait for anything else.
    spawnSync('scancel', [...watchedJobs], { stdio: 'ignore', timeout: 10_000 });
  });
}

export function watchJob(jobId: string): void {
  watchedJobs.add(jobId);
  installExitHandler();
  ensureWatchdog()?.stdin?.write(`+${jobId}\n`);
}

export function unwatchJob(jobId: string): void {
  watchedJobs.delete(jobId);
  watchdog?.stdin?.write(`-${jobId}\n`);
}
