import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSweep } from '../../src/experiments/sweep/run-sweep.js';
import { gridPoints, parseSweepPlan } from '../../src/experiments/sweep/sweep-plan.js';
import { longEnoughToJudge } from '../../src/analysis/verdict.js';
import type { LoadVerdict } from '../../src/types/verdict.js';
import { runCli } from '../helpers/cli.js';

let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-sweep-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

// Virtual time keeps these sweeps to seconds: the sweep logic is the same for real-time runs.
const nodeSettings = { virtualTime: true, numPrompts: 150, randomInputLen: 256, randomOutputLen: 32, profile: 'llama-3-8b-h100', progress: 'off' };
const settings = { ...nodeSettings, numGpus: 2 };

function parseCsv(text: string): Record<string, string>[] {
  const [header, ...lines] = text.trim().split('\n');
  const names = (header as string).split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((value, index) => [names[index], value])));
}

describe('sweep', () => {
  it('expands a grid into every combination, last setting fastest', () => {
    const points = gridPoints({ routingPolicy: ['a', 'b'], requestRate: [1, 2, 3] });
    expect(points.map((point) => point.label)).toEqual([
      'routingPolicy=a__requestRate=1', 'routingPolicy=a__requestRate=2', 'routingPolicy=a__requestRate=3',
      'routingPolicy=b__requestRate=1', 'routingPolicy=b__requestRate=2', 'routingPolicy=b__requestRate=3',
    ]);
  });

  it('runs the grid and writes one row per run, with metrics that follow the load', async () => {
    const plan = parseSweepPlan({ test: 'routing', settings, grid: { routingPolicy: ['round_robin', 'shortest_queue'], requestRate: [5, 2000] } });
    const outputDirectory = join(workDirectory, 'grid');
    const result = await runSweep(plan, { outputDirectory });
    expect(result.runs).toHaveLength(4);
    expect(result.runs.every((run) => run.result?.status === 'completed')).toBe(true);
    const rows = parseCsv(await readFile(join(outputDirectory, 'sweep.csv'), 'utf8'));
    expect(rows.map((row) => row.label)).toEqual(result.runs.map((run) => run.label));
    const ttftAt = (policy: string, rate: string): number => Number(rows.find((row) => row.routingPolicy === policy && row.requestRate === rate)?.ttft_p99_ms);
    // 2000 req/s saturates two simulated H100s: queueing makes the tail TTFT far worse than at 5 req/s.
    expect(ttftAt('round_robin', '2000')).toBeGreaterThan(5 * ttftAt('round_robin', '5'));
    // The comparison labels each run by the settings that differ, and the sweep ends with that table.
    expect(await readFile(join(outputDirectory, 'compare.csv'), 'utf8')).toContain('"request_rate=5, routing_policy=round_robin"');
    expect(result.comparisonTable.split('\n')[0]).toMatch(/^metric\s+request_rate=5, routing_policy=round_robin\s+request_rate=2000, routing_policy=round_robin\s+/);
    expect(result.comparisonTable).toMatch(/server_latency p99 \(ms\)/);
  });

  it('finds the highest rate that meets the objectives by bisection', async () => {
    const plan = parseSweepPlan({ test: 'node', settings: nodeSettings, grid: {}, search: { slo: { ttftMs: 200 }, attainment: 0.9, lowRate: 2, highRate: 5000, steps: 4 } });
    const result = await runSweep(plan, { outputDirectory: join(workDirectory, 'search') });
    expect(result.searches).toHaveLength(1);
    const search = result.searches[0];
    expect(search?.highestPassingRate).toBeGreaterThanOrEqual(2);
    expect(search?.lowestFailingRate).toBeLessThanOrEqual(5000);
    expect(search?.highestPassingRate as number).toBeLessThan(search?.lowestFailingRate as number);
    // Every rate at or below the answer passed; every rate above it did not (a lengthened probe's last run decides).
    const lastRunOfRate = new Map(result.runs.map((run) => [run.values.requestRate as number, run]));
    for (const [rate, run] of lastRunOfRate) expect(run.judgement?.state === 'pass').toBe(rate <= (search?.highestPassingRate as number) + 1e-9);
    const searchCsv = await readFile(join(workDirectory, 'search', 'search.csv'), 'utf8');
    expect(searchCsv).toContain('highest_passing_rate');
  });

  it('does not count a short run that meets the objectives while SATURATED: it lengthens it until the verdict can judge', async () => {
    // 200 prompts at 20 req/s meet these objectives while the queue grows (the verdict: SATURATED); in steady state
    // (2,000 prompts) the same rate misses them.
    const short = { virtualTime: true, numPrompts: 200, seed: 1, progress: 'off' };
    const search = { slo: { ttftMs: 100, tpotMs: 12 }, attainment: 0.9, lowRate: 5, highRate: 20, steps: 2, maxNumPrompts: 1600 };
    const plan = parseSweepPlan({ test: 'node', settings: short, grid: {}, search });
    const result = await runSweep(plan, { outputDirectory: join(workDirectory, 'steady-state') });
    const first = result.runs.find((run) => run.label === 'search__requestRate=20');
    expect(first?.meetsSlo).toBe(true);
    expect(first?.result?.metrics.verdict.state).toBe('saturated');
    const answer = result.searches[0];
    expect(answer?.highestPassingRate).not.toBeNull();
    expect(answer?.highestPassingRate as number).toBeLessThan(20);
    expect(answer?.lowestFailingRate as number).toBeLessThanOrEqual(20);
    // Every run counted as passing was STABLE and long enough to judge; a too-short probe was run again, longer.
    const passed = result.runs.filter((run) => run.judgement?.state === 'pass');
    expect(passed.length).toBeGreaterThan(0);
    for (const run of passed) expect(longEnoughToJudge(run.result?.metrics.verdict as LoadVerdict)).toBe(true);
    expect(result.runs.some((run) => run.judgement?.state === 'lengthen')).toBe(true);
    expect(result.runs.some((run) => run.values.numPrompts === 400)).toBe(true);
    expect(result.runs.every((run) => run.result === undefined || (run.result.run.config.numPrompts as number) <= 1600)).toBe(true);
  });

  it('reports a rate it could not lengthen enough to judge as not judged, never as passing', async () => {
    // 200 prompts at 5 req/s are STABLE, but too few for the verdict to see a backlog growing at 5% of the rate.
    const short = { virtualTime: true, numPrompts: 200, seed: 1, progress: 'off' };
    const plan = parseSweepPlan({ test: 'node', settings: short, grid: {}, search: { slo: { ttftMs: 100, tpotMs: 12 }, attainment: 0.9, lowRate: 5, highRate: 20, steps: 1, maxNumPrompts: 200 } });
    const result = await runSweep(plan, { outputDirectory: join(workDirectory, 'not-judged') });
    const low = result.runs.find((run) => run.label === 'search__requestRate=5');
    expect(low?.result?.metrics.verdict.state).toBe('stable');
    expect(low?.judgement?.state).toBe('not_judged');
    expect(result.searches[0]?.highestPassingRate).toBeNull();
    expect(result.searches[0]?.notJudgedRates).toEqual([5]);
    expect(await readFile(join(workDirectory, 'not-judged', 'search.csv'), 'utf8')).toMatch(/,5,[^\n]*STABLE over a window long enough/);
  });

  it('servelab sweep prints its answer first, rounded, then one row per run', async () => {
    const file = join(workDirectory, 'cli-sweep.json');
    const small = { ...nodeSettings, numPrompts: 40 };
    await writeFile(file, JSON.stringify({ test: 'node', settings: small, grid: { maxRunningRequests: [8, 64] }, search: { slo: { ttftMs: 200 }, attainment: 0.9, lowRate: 2, highRate: 2000, steps: 2, maxNumPrompts: 80 } }));
    const result = await runCli(['sweep', file, '--output-dir', join(workDirectory, 'cli-sweep')]);
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(/^Highest rate meeting the objectives \(TTFT ≤ 200 ms for 90% of requests, run STABLE\), max_running_requests=8: (none|between \d+(\.\d{1,2})? \(passed\) and \d+(\.\d{1,2})? req\/s \(failed\)|\d+(\.\d{1,2})? req\/s, every judged rate passed)/);
    expect(lines[1]).toMatch(/max_running_requests=64: /);
    // The rate as it reads, never a float's full digits.
    expect(result.stdout).not.toMatch(/\d\.\d{4,} req\/s/);
    const tableAt = result.stdout.search(/^run\s+settings\s+status/m);
    expect(tableAt).toBeGreaterThan(result.stdout.indexOf(lines[1] as string));
    // The answer lines carry the objectives, the criterion and the range: one line each, still short of 200 columns.
    for (const line of lines.filter((text) => !text.startsWith('wrote '))) expect(line.length).toBeLessThan(200);
  });

  it('rejects a bad sweep file before running anything', async () => {
    const file = join(workDirectory, 'bad-sweep.yaml');
    await writeFile(file, 'test: node\ngrid:\n  requestRate: []\n');
    const result = await runCli(['sweep', file, '--output-dir', join(workDirectory, 'never')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/grid\.requestRate.*at least one value/);
  });
});

describe('sweep validation', () => {
  it('checks every grid point before the first run, so a bad value late in the grid costs nothing', async () => {
    const plan = parseSweepPlan({ test: 'node', settings: nodeSettings, grid: { requestRate: [10, -1] } });
    const outputDirectory = join(workDirectory, 'late-bad-value');
    await expect(runSweep(plan, { outputDirectory })).rejects.toThrow(/--request-rate/);
    const { existsSync } = await import('node:fs');
    expect(existsSync(join(outputDirectory, 'runs'))).toBe(false);
  });
});
