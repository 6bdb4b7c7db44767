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
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // Gone meanwhile.
  }
  // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so read from the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { pid: Number(pid), state: fields[0] ?? '?', pgid: Number(fields[2]) };
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
