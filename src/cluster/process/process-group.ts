import { readdirSync, readFileSync } from 'node:fs';

/**
 * Questions about a process group after its leader has gone. A launched server's leader can die first (nginx's master
 * killed, SGLang's launcher crashing) while its children (nginx's worker, SGLang's scheduler and detokenizer) keep
 * running in the group, holding ports, GPUs and the pipes to our log: the group is what must be stopped, not the
 * leader.
 */

/** One process as /proc/<pid>/stat tells it. */
interface ProcStat {
  pid: number;
  state: string;
  pgid: number;
}

function readStat(pid: string): ProcStat | undefined {
  const fields = statFields(pid);
  return fields === undefined ? undefined : { pid: Number(pid), state: fields[0] ?? '?', pgid: Number(fields[2]) };
}

/**
 * The live members of process group `pgid`: those not yet dead. A zombie (state Z) is dead: it holds no port, GPU or
 * pipe, only waits for a parent to reap it, and once reparented that parent (PID 1 in a container) may never do so.
 * Undefined where /proc cannot be read (not Linux).
 */
export function liveGroupMembers(pgid: number): number[] | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const members: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(entry);
    if (stat !== undefined && stat.pgid === pgid && stat.state !== 'Z' && stat.state !== 'X') members.push(stat.pid);
  }
  return members;
}

/** Whether group `pgid` still has a live member (see liveGroupMembers; without /proc, whether it can be signalled). */
export function groupHasLiveMembers(pgid: number): boolean {
  const members = liveGroupMembers(pgid);
  if (members !== undefined) return members.length > 0;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** One process of the table: its group, parent, and start time (clock ticks after boot: tells a reused pid apart). */
export interface ProcessEntry {
  pid: number;
  ppid: number;
  pgid: number;
  state: string;
  startTime: string;
}

/** Every process, from /proc; undefined where /proc cannot be read. */
export function readProcessTable(): ProcessEntry[] | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const table: ProcessEntry[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (fields === undefined) continue;
    // Fields after the command: state (3rd field of stat), ppid (4th), pgrp (5th), ..., starttime (22nd).
    table.push({ pid: Number(entry), state: fields[0] ?? '?', ppid: Number(fields[1]), pgid: Number(fields[2]), startTime: fields[19] ?? '' });
  }
  return table;
}

function statFields(pid: string): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The start time of a running process, or undefined when it is gone or a zombie. */
export function startTimeOf(pid: number): string | undefined {
  const fields = statFields(String(pid));
  return fields === undefined || fields[0] === 'Z' || fields[0] === 'X' ? undefined : fields[19];
}

/**
 * The descendants of group `pgid` that left it (a helper started in a new session or group: signalling the group
 * misses it), keyed by pid with their start times. `known` are those found before: after the group's leader dies they
 * are reparented, and only this record still ties them (and their own children) to the group.
 */
export function escapedDescendants(table: readonly ProcessEntry[], pgid: number, known: ReadonlyMap<number, string>): Map<number, string> {
  const children = new Map<number, ProcessEntry[]>();
  for (const entry of table) {
    const siblings = children.get(entry.ppid);
    if (siblings === undefined) children.set(entry.ppid, [entry]);
    else siblings.push(entry);
  }
  const escaped = new Map<number, string>();
  const queue = table.filter((entry) => entry.pgid === pgid || known.get(entry.pid) === entry.startTime);
  const seen = new Set(queue.map((entry) => entry.pid));
  for (const entry of queue) if (entry.pgid !== pgid && entry.state !== 'Z') escaped.set(entry.pid, entry.startTime);
  while (queue.length > 0) {
    const parent = queue.pop() as ProcessEntry;
    for (const child of children.get(parent.pid) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      queue.push(child);
      if (child.pgid !== pgid && child.state !== 'Z') escaped.set(child.pid, child.startTime);
    }
  }
  return escaped;
}
