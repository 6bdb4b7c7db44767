import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSweep } from '../../src/experiments/sweep/run-sweep.js';
import { parseSweepPlan } from '../../src/experiments/sweep/sweep-plan.js';
import { sweepRunsTable } from '../../src/experiments/sweep/sweep-text.js';

let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-sweep-repeats-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

const settings = { virtualTime: true, numPrompts: 40, randomInputLen: 128, randomOutputLen: 16, progress: 'off', repeats: 2, seed: 3 };

describe('sweep with repeats', () => {
  it('repeats each grid point: runs/<label>/repeat-k with seeds base + k - 1, and sweep.csv gives the estimates with intervals', async () => {
    const plan = parseSweepPlan({ test: 'node', settings, grid: { requestRate: [5, 10] } });
    const outputDirectory = join(workDirectory, 'grid');
    const result = await runSweep(plan, { outputDirectory });
    expect(result.runs.map((run) => run.series?.repeats.map((repeat) => repeat.run.config['seed']))).toEqual([[3, 4], [3, 4]]);
    for (const label of ['requestRate=5', 'requestRate=10']) {
      for (const repeat of [1, 2]) expect(existsSync(join(outputDirectory, 'runs', label, `repeat-${repeat}`, 'requests.csv'))).toBe(true);
      expect(existsSync(join(outputDirectory, 'runs', label, 'repeats.csv'))).toBe(true);
    }
    const [header, first] = (await readFile(join(outputDirectory, 'sweep.csv'), 'utf8')).trim().split('\n').map((line) => line.split(','));
    const field = (name: string): string => first?.[header?.indexOf(name) ?? -1] ?? '';
    expect(field('repeats')).toBe('2');
    expect(field('succeeded')).toBe('80');
    const [low, estimate, high] = [field('ttft_p99_ms_low'), field('ttft_p99_ms'), field('ttft_p99_ms_high')].map(Number);
    expect(low).toBeLessThanOrEqual(estimate as number);
    expect(high).toBeGreaterThanOrEqual(estimate as number);
    expect(field('run_directory')).toBe(join(outputDirectory, 'runs', 'requestRate=5'));
    expect(sweepRunsTable(result.runs)).toMatch(/^grid x2\s+request_rate=5\s+STABLE STABLE/m);
  }, 120_000);

  it('refuses repeats with a search: a probe is one run', async () => {
    const plan = parseSweepPlan({ test: 'node', settings, search: { slo: { ttftMs: 100 }, lowRate: 1, highRate: 10 } });
    await expect(runSweep(plan, { outputDirectory: join(workDirectory, 'search') })).rejects.toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringContaining('repeats apply to grid runs') });
  });
});
