import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeTest } from '../../../src/experiments/node-test.js';
import { repeatSeed } from '../../../src/experiments/repeats/run-repeats.js';

let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-repeats-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

const SMALL = { virtualTime: true, numPrompts: 40, requestRate: 10, randomInputLen: 128, randomOutputLen: 16, progress: 'off', quiet: true } as const;

describe('repeats in the library', () => {
  it('derives repeat k\'s seed as seed + k - 1', () => {
    expect([1, 2, 3].map((repeat) => repeatSeed(10, repeat))).toEqual([10, 11, 12]);
  });

  it('run() refuses a configuration with repeats above 1 instead of making one run of it', async () => {
    const test = new NodeTest({ ...SMALL, repeats: 2, outputDir: join(workDirectory, 'refused') });
    await expect(test.run()).rejects.toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringContaining('call runRepeats()') });
  });

  it('refuses repeats below 1 by name', () => {
    expect(() => new NodeTest({ ...SMALL, repeats: 0 })).toThrow(/repeats/);
  });

  it('runRepeats() returns each repeat and the combined estimates, in the first users\' snake_case too', async () => {
    const test = new NodeTest({ ...SMALL, repeats: 2, seed: 4, output_dir: join(workDirectory, 'series') });
    const started: number[] = [];
    const series = await test.runRepeats({ onRepeatStart: (_repeat, _of, seed) => started.push(seed) });
    expect(started).toEqual([4, 5]);
    expect(series.repeats.map((result) => result.run.config['seed'])).toEqual([4, 5]);
    expect(series.repeats.map((result) => result.outputDirectory)).toEqual([join(workDirectory, 'series', 'repeat-1'), join(workDirectory, 'series', 'repeat-2')]);
    expect(series.combined.runs.map((run) => run.directory)).toEqual(['repeat-1', 'repeat-2']);
    const ttft = series.combined.metrics.find((metric) => metric.metric === 'ttft' && metric.statistic === 'p50');
    expect(ttft?.requests).toBe(80);
    expect(ttft?.runs).toBe(2);
    expect(series.files.map((path) => path.slice(path.lastIndexOf('/') + 1)).sort()).toEqual(['repeats.csv', 'report.html', 'summary.json']);
  }, 60_000);
});
