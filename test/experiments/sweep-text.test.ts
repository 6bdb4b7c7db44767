import { describe, expect, it } from 'vitest';
import { roundedRate, searchAnswerLines, sweepRunsTable } from '../../src/experiments/sweep/sweep-text.js';

describe('sweep terminal output', () => {
  const search = { slo: { ttftMs: 200 }, attainment: 0.9, lowRate: 2, highRate: 2000, steps: 5 };

  it('rounds a rate as it reads: three significant figures, whole from 100 up', () => {
    expect(roundedRate(47.568284600108846)).toBe('47.6');
    expect(roundedRate(2)).toBe('2');
    expect(roundedRate(0.123456)).toBe('0.123');
    expect(roundedRate(1234.56)).toBe('1235');
  });

  it('states each search answer on one line, rounded, with the objectives and what bounded it', () => {
    const lines = searchAnswerLines(
      [
        { label: 'routingPolicy=cache_aware', values: { routingPolicy: 'cache_aware' }, highestPassingRate: 47.568284600108846, lowestFailingRate: 52.3099 },
        { label: 'routingPolicy=random', values: { routingPolicy: 'random' }, highestPassingRate: null, lowestFailingRate: 2 },
      ],
      search,
    );
    expect(lines[0]).toBe('Highest rate meeting the objectives (TTFT ≤ 200 ms for 90% of requests), routing_policy=cache_aware: 47.6 req/s (52.3 req/s missed them)');
    expect(lines[1]).toMatch(/routing_policy=random: none, not even 2 req\/s$/);
  });

  it('prints one row per run, a few columns wide', () => {
    const table = sweepRunsTable([
      { label: 'maxRunningRequests=8', values: { maxRunningRequests: 8 }, failure: 'the server never got ready' },
      { label: 'search__requestRate=2000', values: { requestRate: 2000, slo: { ttftMs: 200 } }, meetsSlo: false },
    ]);
    const lines = table.trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^run\s+settings\s+status\s+meets SLO\s+req\/s/);
    expect(lines[2]).toMatch(/^grid\s+max_running_requests=8\s+failed/);
    expect(lines[3]).toMatch(/^search\s+request_rate=2000\s+failed\s+no/);
    for (const line of lines) expect(line.length).toBeLessThan(140);
  });
});
