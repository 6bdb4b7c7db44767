import { spawnSync } from 'node:child_process';
import { PipeWatchdogRegistry } from '../process/pipe-watchdog.js';

/**
 * Makes sure no job servelab submitted outlives it: the jobs' counterpart of the process-group watchdog
 * (src/cluster/process/watchdog.ts), on the same principle. A small detached process holds the read end of a pipe
 * from us; when we die, even by SIGKILL, the kernel closes our end and the watchdog runs `scancel` on every job still
 * registered. While we live, a job is dropped when it ends, and an `exit` handler cancels what remains.
 */
const jobs = new PipeWatchdogRegistry<string>('job-watchdog-main', import.meta.url, (jobIds) => {
  // Synchronous: an exit handler cannot wait for anything else.
  spawnSync('scancel', [...jobIds], { stdio: 'ignore', timeout: 10_000 });
});

export function watchJob(jobId: string): void {
  jobs.add(jobId);
}

export function unwatchJob(jobId: string): void {
  jobs.remove(jobId);
}
