import { describe, expect, it } from 'vitest';
import { summarize } from '../../../src/analysis/summarize.js';
import { comparisonRows, formatComparisonTable, type ComparedRun } from '../../../src/report/compare/compare-runs.js';
import { SeededRandom } from '../../../src/utils/random.js';
import { recordAt, runOf } from '../../analysis/records.js';

/** A run of 400 requests, one every 50 ms, whose TTFT is lognormal (median 40 ms × scale, shape 0.5), from a seed. */
function runWithTtft(seed: number, scale: number, label: string): ComparedRun {
  const random = new SeededRandom(seed);
  const records = Array.from({ length: 400 }, (_, index) => {
    const ttft = 0.04 * scale * Math.exp(0.5 * random.normal());
    const start = index * 0.05;
    return recordAt({ scheduledTime: start, arrivalTime: start, firstTokenTime: start + ttft, finishTime: start + ttft + 0.2, actualOutputTokens: 11 });
  });
  const run = runOf(records);
  return { label, run, summary: summarize(run) };
}

describe('compare: differences with intervals, marked within or beyond the noise', () => {
  const baseline = runWithTtft(1, 1, 'base');
  const same = runWithTtft(2, 1, 'same');
  const shifted = runWithTtft(3, 1.3, 'slower');
  const runs = [baseline, same, shifted];

  it('marks a 30% TTFT shift beyond the noise and second draws of the same distribution within it (10 seeded pairs each)', () => {
    // A 95% interval excludes 0 for about 1 same-distribution pair in 20 by chance: of 10 fixed pairs, at most 2 may
    // be marked (the chance of 3 or more is 1%); every shifted pair must be.
    const statistics = ['mean', 'p50', 'p90'] as const;
    const sameMarked = new Map<string, number>(statistics.map((statistic) => [statistic, 0]));
    for (let pair = 0; pair < 10; pair++) {
      const sameRows = comparisonRows([runWithTtft(100 + 2 * pair, 1, 'a'), runWithTtft(101 + 2 * pair, 1, 'b')]);
      const shiftedRows = comparisonRows([runWithTtft(200 + 2 * pair, 1, 'a'), runWithTtft(201 + 2 * pair, 1.3, 'b')]);
      for (const statistic of statistics) {
        const sameDelta = sameRows.find((row) => row.metric === `ttft ${statistic}`)?.deltas?.[0];
        const shiftedRow = shiftedRows.find((row) => row.metric === `ttft ${statistic}`);
        const shiftedDelta = shiftedRow?.deltas?.[0];
        expect(sameDelta).toBeDefined();
        if (sameDelta?.beyondNoise === true) sameMarked.set(statistic, (sameMarked.get(statistic) ?? 0) + 1);
        expect(shiftedDelta?.beyondNoise, `pair ${pair}, ttft ${statistic} shifted 30%`).toBe(true);
        expect(shiftedDelta?.low).toBeGreaterThan(0);
        // The estimate is the difference of the two runs' own values (ms), as the table shows them.
        const values = shiftedRow?.values as number[];
        expect(shiftedDelta?.estimate).toBeCloseTo((values[1] as number) - (values[0] as number), 6);
      }
    }
    for (const statistic of statistics) expect(sameMarked.get(statistic), `same-distribution pairs marked beyond noise, ttft ${statistic}`).toBeLessThanOrEqual(2);
    // Throughput of single runs: one value a side holds no spread, so no interval is claimed.
    expect(comparisonRows(runs).find((row) => row.metric === 'request throughput')?.deltas).toBeUndefined();
  });

  it('prints the difference, its interval and the judgement in a column per later run', () => {
    const text = formatComparisonTable(runs);
    expect(text.split('\n')[0]).toMatch(/Δ same\s+Δ slower$/);
    expect(text).toMatch(/^ttft p50 \(ms\).*\[[-+][\d.]+, \+[\d.]+\] within noise\s+\+[\d.]+ \[\+[\d.]+, \+[\d.]+\] beyond noise$/m);
    expect(text).toContain('"beyond noise" when the interval excludes 0');
  });
});
