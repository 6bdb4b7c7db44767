import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built CLI that `npm test` builds first (tests spawn it as users do). */
export const cliPath = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

export function assertCliBuilt(): void {
  if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run "npm run build" (npm test does it first)`);
}

export interface CliRun {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): CliRun {
  assertCliBuilt();
  const child = spawn(process.execPath, [cliPath, ...args], { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  return { child, stdout: () => stdout, stderr: () => stderr, done };
}

export async function runCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = startCli(args, options);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  const { code } = await run.done;
  clearTimeout(timer);
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

/**
 * True while a process with this pid runs. A zombie (ended, not yet reaped) is not alive: an orphan's zombie waits for
 * the machine's init to reap it, which in this project's sandbox can take seconds, and signal 0 still reaches it. The
 * product's own check skips zombies likewise (groupHasLiveMembers in src/cluster/process/process-group.ts).
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    // No /proc (not Linux), or gone between the two reads.
    return existsSync('/proc') ? false : true;
  }
}

/** The pid a launched process's log names on its first line (`# servelab: pid N: ...`). */
export function pidFromLog(logText: string): number | undefined {
  const match = logText.match(/^# servelab: pid (\d+):/m);
  return match === null ? undefined : Number(match[1]);
}

/** The pids of every process a run launched, read from the first line of each log in its `logs/` (see pidFromLog). */
export async function launchedPids(outputDirectory: string): Promise<number[]> {
  const logs = join(outputDirectory, 'logs');
  const pids: number[] = [];
  for (const name of await readdir(logs)) {
    const pid = pidFromLog(await readFile(join(logs, name), 'utf8'));
    if (pid !== undefined) pids.push(pid);
  }
  return pids;
}
