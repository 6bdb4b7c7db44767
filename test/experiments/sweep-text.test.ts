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

  it('states each search answer on one line as a range, rounded, with the objectives and the STABLE criterion', () => {
    const lines = searchAnswerLines(
      [
        { label: 'routingPolicy=cache_aware', values: { routingPolicy: 'cache_aware' }, highestPassingRate: 47.568284600108846, lowestFailingRate: 52.3099, notJudgedRates: [] },
        { label: 'routingPolicy=random', values: { routingPolicy: 'random' }, highestPassingRate: null, lowestFailingRate: 2, notJudgedRates: [] },
        { label: 'routingPolicy=power_of_two', values: { routingPolicy: 'power_of_two' }, highestPassingRate: 10, lowestFailingRate: 40, notJudgedRates: [20] },
        { label: 'routingPolicy=round_robin', values: { routingPolicy: 'round_robin' }, highestPassingRate: 2000, lowestFailingRate: null, notJudgedRates: [] },
      ],
      search,
    );
    expect(lines[0]).toBe('Highest rate meeting the objectives (TTFT ≤ 200 ms for 90% of requests, run STABLE), routing_policy=cache_aware: between 47.6 (passed) and 52.3 req/s (failed)');
    expect(lines[1]).toMatch(/routing_policy=random: none, 2 req\/s failed$/);
    expect(lines[2]).toMatch(/routing_policy=power_of_two: between 10 \(passed\) and 40 req\/s \(failed\); 20 req\/s not judged \(search_why in sweep.csv\)$/);
    expect(lines[3]).toMatch(/routing_policy=round_robin: 2000 req\/s, every judged rate passed, up to 2000 req\/s$/);
  });

  it('prints one row per run, a few columns wide', () => {
    const table = sweepRunsTable([
      { label: 'maxRunningRequests=8', values: { maxRunningRequests: 8 }, failure: 'the server never got ready' },
      { label: 'search__requestRate=2000', values: { requestRate: 2000, slo: { ttftMs: 200 } }, meetsSlo: false, judgement: { state: 'not_judged', why: 'the run failed' } },
    ]);
    const lines = table.trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^run\s+settings\s+status\s+SLO met\s+search\s+req\/s/);
    expect(lines[2]).toMatch(/^grid\s+max_running_requests=8\s+failed/);
    expect(lines[3]).toMatch(/^search\s+request_rate=2000\s+failed\s+no\s+not judged/);
    for (const line of lines) expect(line.length).toBeLessThan(140);
  });
});
