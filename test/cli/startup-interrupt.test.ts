import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive, pidFromLog, startCli, type CliRun } from '../helpers/cli.js';

const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
const READY_LINE = 'The server is fired up and ready to roll!';
let workDirectory: string;
let run: CliRun | undefined;
const pausedPids: number[] = [];

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-startup-interrupt-'));
});
afterAll(async () => {
  // Only when the test failed is anything left: the CLI and the servers it launched, all started by this test.
  for (const pid of pausedPids) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  if (run !== undefined && run.child.exitCode === null) run.child.kill('SIGKILL');
  await rm(workDirectory, { recursive: true, force: true });
});

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function serverLogs(logsPath: string): Promise<{ name: string; text: string }[]> {
  const names = (await readdir(logsPath).catch(() => [] as string[])).filter((name) => /^node-\d+\.log$/.test(name));
  return Promise.all(names.map(async (name) => ({ name, text: await readFile(join(logsPath, name), 'utf8') })));
}

describe('Ctrl-C during a routing test start-up', () => {
  it('aborts the launches still pending, stops those up, exits 130 with one line and leaves no server running', async () => {
    const outputDir = join(workDirectory, 'run');
    const logsPath = join(outputDir, 'logs');
    // A ready timeout far beyond the test's: a start-up that waited for every server to get ready never ends in time.
    run = startCli(['route', '--num-gpus', '24', '--profile', fastProfile, '--ready-timeout', '600', '--output-dir', outputDir, '--progress', 'lines']);
    // One launched server is held (SIGSTOP) before it gets ready: it stands for a slow start, so the interrupt comes
    // while at least one launch is certainly still pending, however fast this machine starts the others.
    let held: { name: string; pid: number } | undefined;
    while (held === undefined && run.child.exitCode === null) {
      for (const log of await serverLogs(logsPath)) {
        const pid = pidFromLog(log.text);
        if (pid === undefined || log.text.includes(READY_LINE)) continue;
        process.kill(pid, 'SIGSTOP');
        pausedPids.push(pid);
        // It may have printed its ready line between the read and the stop: then it does not count as pending.
        if ((await readFile(join(logsPath, log.name), 'utf8')).includes(READY_LINE)) process.kill(pid, 'SIGCONT');
        else held = { name: log.name, pid };
        break;
      }
      if (held === undefined) await pause(50);
    }
    expect(held).toBeDefined();
    run.child.kill('SIGINT');
    const { code } = await run.done;

    expect(code).toBe(130);
    const lines = run.stderr().split('\n').filter((line) => line.startsWith('servelab:'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/SIGINT received: stopping the start-up .*nothing was measured/);
    const logs = await serverLogs(logsPath);
    expect(logs.length).toBeGreaterThan(0);
    for (const log of logs) {
      const pid = pidFromLog(log.text) as number;
      expect(isAlive(pid), `${log.name} (pid ${pid}) is still running after servelab exited`).toBe(false);
    }
    // The held server was never waited for: it never got ready, and it is gone all the same.
    expect((await readFile(join(logsPath, held?.name as string), 'utf8')).includes(READY_LINE)).toBe(false);
  }, 60_000);
});
