import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive, pidFromLog, startCli } from '../helpers/cli.js';

const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
let workDirectory: string;

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-teardown-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

async function pidsInLogs(outputDir: string): Promise<number[]> {
  const logs = join(outputDir, 'logs');
  const pids: number[] = [];
  for (const name of await readdir(logs).catch(() => [] as string[])) {
    const pid = pidFromLog(await readFile(join(logs, name), 'utf8'));
    if (pid !== undefined) pids.push(pid);
  }
  return pids;
}

describe('no launched process outlives servelab', () => {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    it(`a routing test stopped by ${signal} leaves no server or router running`, async () => {
      const outputDir = join(workDirectory, signal);
      const run = startCli([
        'route', '--num-gpus', '2', '--request-rate', '20', '--num-prompts', '1000', '--random-input-len', '16', '--random-output-len', '8',
        '--profile', fastProfile, '--output-dir', outputDir, '--progress', 'lines',
      ]);
      // Servers and router all up (the builtin router traces itself: no taps process): the load has started.
      expect(await waitFor(() => /done/.test(run.stderr()), 20_000)).toBe(true);
      const pids = await pidsInLogs(outputDir);
      expect(pids.length).toBe(3);
      for (const pid of pids) expect(isAlive(pid)).toBe(true);
      run.child.kill(signal);
      await run.done;
      // SIGTERM: servelab stops them itself. SIGKILL: nothing of servelab runs any more; its watchdog does it.
      expect(await waitFor(() => pids.every((pid) => !isAlive(pid)), 10_000)).toBe(true);
    });
  }
});
