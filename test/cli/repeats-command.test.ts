import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-repeats-cli-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

interface CombinedMetric {
  metric: string;
  statistic: string;
  unit: string;
  estimate: number;
  low: number | null;
  high: number | null;
  method: string;
  runs: number;
  requests: number;
  resamples: number | null;
}

describe('servelab route --repeats N', () => {
  it('makes N complete run directories with seeds base + k - 1, and a combined summary with 95% intervals', async () => {
    const outputDir = join(workDirectory, 'routing');
    const result = await runCli([
      'route', '--virtual-time', '--num-gpus', '2', '--request-rate', '20', '--num-prompts', '80', '--random-input-len', '256', '--random-output-len', '32',
      '--seed', '5', '--repeats', '3', '--progress', 'off', '--output-dir', outputDir,
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('[repeat 3/3] seed 7');
    const entries = (await readdir(outputDir)).sort();
    expect(entries).toEqual(expect.arrayContaining(['repeat-1', 'repeat-2', 'repeat-3', 'repeats.csv', 'report.html', 'summary.json']));
    const seeds: number[] = [];
    for (const repeat of [1, 2, 3]) {
      const files = await readdir(join(outputDir, `repeat-${repeat}`));
      // Every file a single run has.
      expect(files).toEqual(expect.arrayContaining(['config.json', 'requests.csv', 'requests.jsonl', 'requests.parquet', 'summary.json', 'report.html', 'nodes.csv']));
      const config = JSON.parse(await readFile(join(outputDir, `repeat-${repeat}`, 'config.json'), 'utf8')) as { seed: number; repeats: number };
      seeds.push(config.seed);
      expect(config.repeats).toBe(1);
    }
    expect(seeds).toEqual([5, 6, 7]);
    const combined = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as { format: string; repeats: number; runs: { seed: number }[]; confidence: number; metrics: CombinedMetric[] };
    expect(combined.format).toBe('servelab-repeats');
    expect(combined.repeats).toBe(3);
    expect(combined.runs.map((run) => run.seed)).toEqual([5, 6, 7]);
    expect(combined.confidence).toBe(0.95);
    const ttftP99 = combined.metrics.find((metric) => metric.metric === 'ttft' && metric.statistic === 'p99');
    expect(ttftP99).toMatchObject({ unit: 'ms', method: 'bootstrap-runs-requests', runs: 3, requests: 240, resamples: 1000 });
    expect(ttftP99?.low).toBeLessThanOrEqual(ttftP99?.estimate as number);
    expect(ttftP99?.high).toBeGreaterThanOrEqual(ttftP99?.estimate as number);
    // The pooled p99 lies among the repeats' own p99s' range or near it; the interval is not a point.
    expect((ttftP99?.high as number) - (ttftP99?.low as number)).toBeGreaterThan(0);
    const throughput = combined.metrics.find((metric) => metric.metric === 'request_throughput');
    expect(throughput).toMatchObject({ statistic: 'value', unit: 'req/s', method: 't-over-runs', runs: 3 });
    // Each repeat's summary.json holds its own throughput; the estimate is their mean.
    const perRun: number[] = [];
    for (const repeat of [1, 2, 3]) {
      const summary = JSON.parse(await readFile(join(outputDir, `repeat-${repeat}`, 'summary.json'), 'utf8')) as { metrics: { throughput: { requestsPerSecond: number } } };
      perRun.push(summary.metrics.throughput.requestsPerSecond);
    }
    expect(new Set(perRun).size).toBe(3); // different seeds, different runs
    expect(throughput?.estimate).toBeCloseTo(perRun.reduce((sum, value) => sum + value, 0) / 3, 9);
    const csv = await readFile(join(outputDir, 'repeats.csv'), 'utf8');
    expect(csv.split('\n')[0]).toBe('metric,statistic,unit,estimate,low,high,method,runs,requests,resamples');
    expect(csv).toMatch(/^ttft,p99,ms,[\d.]+,[\d.]+,[\d.]+,bootstrap-runs-requests,3,240,1000$/m);
    expect(await readFile(join(outputDir, 'report.html'), 'utf8')).toContain('id="repeats-confidence"');
    expect(result.stdout).toMatch(/servelab routing test: 3 repeats/);
    expect(result.stdout).toMatch(/TTFT p99 \(ms\)\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+bootstrap runs\+requests, 1000 resamples/);
  }, 120_000);

  it('refuses a repeats directory where one run is expected, naming its repeats', async () => {
    const outputDir = join(workDirectory, 'routing');
    const result = await runCli(['report', outputDir]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('holds 3 repeats of a test (repeat-1 .. repeat-3/ are its runs)');
  }, 60_000);
});
