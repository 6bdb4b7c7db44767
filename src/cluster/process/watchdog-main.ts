/**
 * The watchdog process (see watchdog.ts). Reads `+PGID` / `-PGID` lines on stdin; at end-of-file (its parent died or
 * exited) it sends SIGTERM to every group still registered, then SIGKILL a moment later, and exits.
 */
import { groupHasLiveMembers } from './process-group.js';

const groups = new Set<number>();
let buffered = '';

process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  buffered += chunk;
  const lines = buffered.split('\n');
  buffered = lines.pop() ?? '';
  for (const line of lines) {
    const pgid = Number(line.slice(1));
    if (!Number.isInteger(pgid) || pgid <= 0) continue;
    if (line.startsWith('+')) groups.add(pgid);
    // A group is dropped only once no member is left: a leader that exited first may leave children running.
    else if (line.startsWith('-') && !groupHasLiveMembers(pgid)) groups.delete(pgid);
  }
});
process.stdin.on('end', () => {
  const signalAll = (signal: NodeJS.Signals): void => {
    for (const pgid of groups) {
      try {
        process.kill(-pgid, signal);
      } catch {
        // Already gone.
      }
    }
  };
  signalAll('SIGTERM');
  setTimeout(() => {
    signalAll('SIGKILL');
    process.exit(0);
  }, 2_000);
});
// Ignore the terminal's Ctrl-C: the parent decides; we act only when it is gone.
process.on('SIGINT', () => undefined);
