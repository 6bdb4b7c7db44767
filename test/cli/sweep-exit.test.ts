import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
let workDirectory: string;

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-sweep-exit-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

describe('servelab sweep with a failed run', () => {
  it('exits 3 (not 0), names the failed run and keeps every run\'s files', async () => {
    const sweepFile = join(workDirectory, 'sweep.json');
    // The second point's server cannot get ready within 1 ms: that run fails, the first completes.
    const plan = {
      test: 'node',
      settings: { numPrompts: 20, requestRate: 20, randomInputLen: 32, randomOutputLen: 8, profile: fastProfile },
      grid: { readyTimeoutS: [30, 0.001] },
    };
    await writeFile(sweepFile, JSON.stringify(plan));
    const outputDir = join(workDirectory, 'out');
    const result = await runCli(['sweep', sweepFile, '--output-dir', outputDir], { timeoutMs: 120_000 });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/servelab sweep: run readyTimeoutS=0\.001 failed: /);
    const rows = (await readFile(join(outputDir, 'sweep.csv'), 'utf8')).trim().split('\n');
    expect(rows).toHaveLength(3);
    expect(rows[1]).toMatch(/^readyTimeoutS=30,30,completed,/);
    expect(rows[2]).toMatch(/^readyTimeoutS=0\.001,0\.001,failed,/);
    expect(existsSync(join(outputDir, 'runs', 'readyTimeoutS=30', 'summary.json'))).toBe(true);
    expect(existsSync(join(outputDir, 'runs', 'readyTimeoutS=0.001', 'logs', 'sim-server.log'))).toBe(true);
    expect(existsSync(join(outputDir, 'compare.csv'))).toBe(true);
  }, 150_000);

  it('documents its exit codes in --help', async () => {
    const help = await runCli(['sweep', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Exit status:\n\s+0 +every run completed\n\s+3 +the sweep finished but a run failed/);
  });
});
