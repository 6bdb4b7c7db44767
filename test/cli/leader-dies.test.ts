import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pidFromLog, startCli } from '../helpers/cli.js';
import { nginxMissing } from '../helpers/require-tool.js';

const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
let workDirectory: string;

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-leader-dies-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

/** pid, state and parent of every process, from /proc. */
function processTable(): { pid: number; ppid: number; state: string }[] {
  const table: { pid: number; ppid: number; state: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      table.push({ pid: Number(entry), state: fields[0] ?? '?', ppid: Number(fields[1]) });
    } catch {
      // Gone meanwhile.
    }
  }
  return table;
}

/** Running: exists and is not a zombie (a reparented zombie holds no port and may never be reaped in a container). */
function isRunning(pid: number): boolean {
  return processTable().some((entry) => entry.pid === pid && entry.state !== 'Z');
}

async function waitFor<T>(probe: () => T | undefined, timeoutMs: number): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return probe();
}

// requireTool prints the one line that says why, where nginx cannot run.
const nginxReason = nginxMissing();

describe('a routing run whose nginx master is SIGKILLed mid-run (issue 29)', () => {
  it.skipIf(nginxReason !== undefined)('servelab prints its results and exits, and no nginx worker is left running (needs the nginx package)', async () => {
    const outputDir = join(workDirectory, 'nginx-master-killed');
    let workerPid: number | undefined;
    const run = startCli([
      'route', '--router', 'nginx', '--num-gpus', '2', '--request-rate', '20', '--num-prompts', '200', '--random-input-len', '16',
      '--random-output-len', '8', '--profile', fastProfile, '--output-dir', outputDir, '--progress', 'lines',
    ]);
    try {
      const masterPid = await waitFor(() => {
        const path = join(outputDir, 'logs', 'nginx.log');
        return existsSync(path) ? pidFromLog(readFileSync(path, 'utf8')) : undefined;
      }, 30_000);
      expect(masterPid, run.stderr()).toBeDefined();
      workerPid = await waitFor(() => processTable().find((entry) => entry.ppid === masterPid)?.pid, 10_000);
      expect(workerPid).toBeDefined();
      // The load is under way before the master dies.
      expect(await waitFor(() => (/done/.test(run.stderr()) ? true : undefined), 30_000), run.stderr()).toBe(true);
      process.kill(masterPid as number, 'SIGKILL');
      // Before the fix the run printed its results and never exited: its worker, reparented, held our pipes open.
      const exited = await Promise.race([run.done, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 60_000))]);
      expect(exited, `servelab did not exit; stdout: ${run.stdout().slice(-400)}`).toBeDefined();
      expect(exited?.signal).toBeNull();
      expect(run.stdout()).toContain(`results: ${outputDir}`);
      expect(isRunning(workerPid as number)).toBe(false);
    } finally {
      // Only what this test started, by pid (on the old code the orphaned worker outlived servelab).
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
      if (workerPid !== undefined && isRunning(workerPid)) process.kill(workerPid, 'SIGKILL');
    }
  }, 120_000);
});
