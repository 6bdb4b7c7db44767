import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeLoad, longEnoughToJudge, smallestDetectableGrowthShare } from '../../src/analysis/verdict.js';
import { NodeTest } from '../../src/index.js';
import { formatTerminalSummary } from '../../src/report/terminal/format-terminal-summary.js';
import { recordAt, T0 } from './records.js';

let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-verdict-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

/** One request a second for `count` seconds, each taking `serviceSeconds(index)` from arrival to finish. */
function steadyArrivals(count: number, serviceSeconds: (index: number) => number) {
  return Array.from({ length: count }, (_, index) =>
    recordAt({ scheduledTime: index, arrivalTime: index, finishTime: index + serviceSeconds(index) }),
  );
}

describe('the verdict (hand-built records)', () => {
  it('calls a load stable when each request leaves before the backlog builds', () => {
    const verdict = judgeLoad(steadyArrivals(100, () => 2.5), T0, 1);
    expect(verdict.state).toBe('stable');
    expect(verdict.evidence?.offered_rate_per_s).toBeCloseTo(1, 1);
    expect(verdict.evidence?.served_rate_per_s).toBeCloseTo(1, 1);
    expect(verdict.evidence?.in_system_growth_per_s).toBeCloseTo(0, 1);
  });

  it('calls a load saturated when a single server completes one request every 2 s and they arrive every second', () => {
    // A FIFO server of service time 2 s: request i finishes at 2(i + 1), so the backlog grows by 0.5 a second.
    const records = Array.from({ length: 100 }, (_, index) => recordAt({ scheduledTime: index, arrivalTime: index, finishTime: 2 * (index + 1) }));
    const verdict = judgeLoad(records, T0, 1);
    expect(verdict.state).toBe('saturated');
    expect(verdict.evidence?.in_system_growth_per_s).toBeCloseTo(0.5, 1);
    expect(verdict.evidence?.served_to_offered_ratio).toBeCloseTo(0.5, 1);
    expect(verdict.reason).toMatch(/arrivals outran completions/);
  });

  it('counts requests held back in the client: the offered instant is the scheduled one', () => {
    // The client sends them at the server's pace (arrival = previous finish), but they were due once a second.
    const records = Array.from({ length: 100 }, (_, index) => recordAt({ scheduledTime: index, arrivalTime: 2 * index, finishTime: 2 * (index + 1) }));
    expect(judgeLoad(records, T0, 1).state).toBe('saturated');
  });

  it('calls an all-at-once load saturated, and says why', () => {
    const records = Array.from({ length: 50 }, (_, index) => recordAt({ scheduledTime: 0, arrivalTime: 0, finishTime: 0.1 * (index + 1) }));
    const verdict = judgeLoad(records, T0, Number.POSITIVE_INFINITY);
    expect(verdict.state).toBe('saturated');
    expect(verdict.reason).toMatch(/offered at once/);
  });

  it('does not call a few slow requests at the end saturation (growth must beat the noise floor)', () => {
    const records = steadyArrivals(100, (index) => (index >= 96 ? 6 : 1));
    expect(judgeLoad(records, T0, 1).state).toBe('stable');
  });

  it('says whether a stable run was long enough to see a backlog growing at min_growth_share of the rate', () => {
    // 100 s at 1 req/s: ~79 requests in the window, so only growth of 10 (about 13% of the rate) would show.
    const short = judgeLoad(steadyArrivals(100, () => 2.5), T0, 1);
    expect(short.state).toBe('stable');
    expect(smallestDetectableGrowthShare(short)).toBeCloseTo(10 / 79.2, 2);
    expect(longEnoughToJudge(short)).toBe(false);
    expect(longEnoughToJudge(judgeLoad(steadyArrivals(400, () => 2.5), T0, 1))).toBe(true);
    // ~40 requests in the system: growth must reach half that level, so the window needs 10x the time in the system.
    const deep = judgeLoad(steadyArrivals(400, () => 40), T0, 1);
    expect(deep.state).toBe('stable');
    expect(longEnoughToJudge(deep)).toBe(false);
    expect(longEnoughToJudge(judgeLoad(steadyArrivals(1000, () => 40), T0, 1))).toBe(true);
  });

  it('is unknown with fewer than two requests sent', () => {
    expect(judgeLoad([recordAt({ arrivalTime: 0, finishTime: 1 })], T0, 1).state).toBe('unknown');
  });
});

describe('the verdict on virtual-time runs (deterministic)', () => {
  // One simulated Llama-3-8B/H100 server with at most 8 running requests: prompts of 512 tokens and 256 output tokens
  // make about 5 req/s its capacity: 4 req/s is within it, 8 and 200 req/s are beyond it.
  const settings = { virtualTime: true, numPrompts: 200, randomInputLen: 512, randomOutputLen: 256, randomRangeRatio: 1, maxRunningRequests: 8, profile: 'llama-3-8b-h100', seed: 3, warmupRequests: 0, progress: 'off' } as const;

  it('a load within capacity is stable, first in the terminal summary and in summary.json', async () => {
    const outputDir = join(workDirectory, 'stable');
    const result = await new NodeTest({ ...settings, requestRate: 4, outputDir }).run();
    expect(result.metrics.verdict.state).toBe('stable');
    const text = formatTerminalSummary(result.run, result.metrics);
    expect(text.split('\n')[1]).toMatch(/^Verdict: +STABLE/);
    const file = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as { metrics: Record<string, unknown> };
    expect(Object.keys(file.metrics)[0]).toBe('verdict');
    expect((file.metrics['verdict'] as { state: string }).state).toBe('stable');
  });

  it('a load just beyond capacity (8 req/s) is saturated too', async () => {
    const result = await new NodeTest({ ...settings, requestRate: 8, outputDir: join(workDirectory, 'just-saturated') }).run();
    expect(result.metrics.verdict.state).toBe('saturated');
  });

  it('a load beyond capacity is saturated, with offered above served in the evidence, first in report.html', async () => {
    const outputDir = join(workDirectory, 'saturated');
    const result = await new NodeTest({ ...settings, requestRate: 200, outputDir }).run();
    const verdict = result.metrics.verdict;
    expect(verdict.state).toBe('saturated');
    expect(verdict.evidence?.offered_rate_per_s ?? 0).toBeGreaterThan(2 * (verdict.evidence?.served_rate_per_s ?? Infinity));
    expect(verdict.evidence?.in_system_at_window_end ?? 0).toBeGreaterThan(verdict.evidence?.in_system_at_window_start ?? Infinity);
    const html = await readFile(join(outputDir, 'report.html'), 'utf8');
    expect(html.indexOf('SATURATED')).toBeGreaterThan(0);
    expect(html.indexOf('SATURATED')).toBeLessThan(html.indexOf('<h2>Overview</h2>'));
  });
});
