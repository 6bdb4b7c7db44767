import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { childEnv } from '../process/child-env.js';

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
  if (watchdog !== undefined) return watchdog;
  const scriptPath = fileURLToPath(new URL(`./job-watchdog-main${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url));
  if (scriptPath.endsWith('.ts')) return undefined; // From sources under a test runner: the exit handler suffices.
  watchdog = spawn(process.execPath, [scriptPath], { stdio: ['pipe', 'ignore', 'ignore'], detached: true, env: childEnv() });
  watchdog.unref();
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
