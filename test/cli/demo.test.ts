import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-demo-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

describe('servelab demo (what npm start runs)', () => {
  it('runs the routing test on the simulated cluster to completion, writes its report, and notes nothing about its own settings', async () => {
    const outputDir = join(workDirectory, 'demo');
    const result = await runCli(['demo', '--output-dir', outputDir], { cwd: workDirectory, timeoutMs: 150_000 });
    expect(result.code, result.stderr.slice(-2000)).toBe(0);
    for (const file of ['report.html', 'requests.csv', 'summary.json', 'nodes.csv']) expect(existsSync(join(outputDir, file)), file).toBe(true);
    const summary = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as { run: { status: string }; metrics: { counts: { total: number; succeeded: number } } };
    expect(summary.run.status).toBe('completed');
    expect(summary.metrics.counts).toMatchObject({ total: 320, succeeded: 320 });
    // The demo's workload is its own choice: a note that it measured other than --num-prompts would be always on.
    expect(result.stdout + result.stderr).not.toMatch(/not the \d+ asked for \(--num-prompts\)/);
  }, 160_000);
});
