/**
 * The watchdog process (see watchdog.ts). Reads `+PGID` / `-PGID` lines on stdin; at end-of-file (its parent died or
 * exited) it sends SIGTERM to every group still registered, then SIGKILL a moment later, and exits.
 *
 * It also records, every SCAN_INTERVAL_MS, the descendants of each group that left it (a helper started in a new
 * session): signalling the group misses them, and once the leader is dead nothing else ties them to it. When a group
 * is dropped (servelab stopped it, or it ended by itself) and at end-of-file, those are stopped too, each only while
 * its start time still matches the one recorded (a pid can be reused).
 */
import { readRegistrationLines } from '../../utils/registration-lines.js';
import { escapedDescendants, groupHasLiveMembers, readProcessTable, startTimeOf } from './process-group.js';

/** How often the process table is read while groups are watched: a /proc scan, a few milliseconds in this process. */
const SCAN_INTERVAL_MS = 500;
/** SIGTERM, then SIGKILL after this. */
const KILL_AFTER_MS = 2_000;

const groups = new Set<number>();
/** Per group: its escaped descendants, pid to start time. */
const escaped = new Map<number, Map<number, string>>();

function scan(): void {
  if (groups.size === 0) return;
  const table = readProcessTable();
  if (table === undefined) return;
  for (const pgid of groups) escaped.set(pgid, escapedDescendants(table, pgid, escaped.get(pgid) ?? new Map()));
}

function signalEscaped(recorded: ReadonlyMap<number, string>, signal: NodeJS.Signals): void {
  for (const [pid, startTime] of recorded) {
    if (startTimeOf(pid) !== startTime) continue;
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

/** Stops what left a dropped group: SIGTERM, then SIGKILL for what remains. */
function stopEscaped(recorded: ReadonlyMap<number, string> | undefined): void {
  if (recorded === undefined || recorded.size === 0) return;
  signalEscaped(recorded, 'SIGTERM');
  setTimeout(() => signalEscaped(recorded, 'SIGKILL'), KILL_AFTER_MS);
}

setInterval(scan, SCAN_INTERVAL_MS);

/** A process group id as the watchdog accepts it: a whole number above 0 (undefined for anything else). */
function groupId(id: string): number | undefined {
  const pgid = Number(id);
  return Number.isInteger(pgid) && pgid > 0 ? pgid : undefined;
}

readRegistrationLines(process.stdin, {
  register(id) {
    const pgid = groupId(id);
    if (pgid !== undefined) groups.add(pgid);
  },
  unregister(id) {
    const pgid = groupId(id);
    // A group is dropped only once no member is left: a leader that exited first may leave children running.
    if (pgid === undefined || !groups.has(pgid) || groupHasLiveMembers(pgid)) return;
    scan();
    groups.delete(pgid);
    stopEscaped(escaped.get(pgid));
    escaped.delete(pgid);
  },
});
process.stdin.on('end', () => {
  scan();
  const signalAll = (signal: NodeJS.Signals): void => {
    for (const pgid of groups) {
      try {
        process.kill(-pgid, signal);
      } catch {
        // Already gone.
      }
    }
    for (const recorded of escaped.values()) signalEscaped(recorded, signal);
  };
  signalAll('SIGTERM');
  setTimeout(() => {
    signalAll('SIGKILL');
    process.exit(0);
  }, KILL_AFTER_MS);
});
// Ignore the terminal's Ctrl-C: the parent decides; we act only when it is gone.
process.on('SIGINT', () => undefined);
