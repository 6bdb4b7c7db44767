import { PipeWatchdogRegistry } from './pipe-watchdog.js';

/**
 * Makes sure no launched process outlives servelab, even when servelab itself is killed with SIGKILL (which no handler
 * can catch). A small watchdog process holds the read end of a pipe from us; when we die, the kernel closes our end,
 * the watchdog reads end-of-file and kills every process group we registered. While we live, normal teardown removes
 * groups as they exit, and an `exit` handler kills what remains.
 */
const groups = new PipeWatchdogRegistry<number>('watchdog-main', import.meta.url, (pgids) => {
  for (const pgid of pgids) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
});

export function watchProcessGroup(pgid: number): void {
  groups.add(pgid);
}

export function unwatchProcessGroup(pgid: number): void {
  groups.remove(pgid);
}
