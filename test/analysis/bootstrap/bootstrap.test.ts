import { describe, expect, it } from 'vitest';
import { bootstrapDifference, bootstrapEstimates, perRunEstimate } from '../../../src/analysis/bootstrap/repeat-estimates.js';
import { orderPercentileBands, orderStatisticBootstrapDraws, singleRunPercentileInterval } from '../../../src/analysis/bootstrap/order-statistic-bootstrap.js';
import { hierarchicalBootstrapDraws, PooledRuns } from '../../../src/analysis/bootstrap/hierarchical-bootstrap.js';
import { p99DecidedByTop, PRECISION_PERCENTILES, runPrecision } from '../../../src/analysis/bootstrap/run-precision.js';
import { SeededRandom } from '../../../src/utils/random.js';
import { percentileOfSorted } from '../../../src/analysis/statistics.js';

/** n draws of a lognormal with median e^mu and shape sigma, from a seeded generator. */
function lognormal(count: number, seed: number, mu = 0, sigma = 1): Float64Array {
  const random = new SeededRandom(seed);
  const values = new Float64Array(count);
  for (let index = 0; index < count; index++) values[index] = Math.exp(mu + sigma * random.normal());
  return values;
}

function sorted(values: Float64Array): Float64Array {
  return Float64Array.from(values).sort();
}

/** Seeds 1..200: a fixed set, so the coverage counted is the same on every run of the test. */
const TRIAL_SEEDS = Array.from({ length: 200 }, (_, index) => index + 1);

describe('bootstrap intervals', () => {
  // A 95% interval should hold the true value in about 95% of samples: 200 trials give a standard error of 1.5
  // points, so 0.91-0.99 is three of them either side.
  it('covers a lognormal p50 (true value 1) in about 95% of seeded trials: the order-statistic bootstrap', () => {
    let covered = 0;
    for (const seed of TRIAL_SEEDS) {
      const interval = singleRunPercentileInterval(sorted(lognormal(400, seed)), 50, { resamples: 1000, seed });
      if (interval !== null && interval.low <= 1 && 1 <= interval.high) covered++;
    }
    const coverage = covered / TRIAL_SEEDS.length;
    expect(coverage).toBeGreaterThanOrEqual(0.91);
    expect(coverage).toBeLessThanOrEqual(0.99);
  });

  it('covers a lognormal p50 in about 95% of seeded trials: the resampling bootstrap over requests (one run)', () => {
    let covered = 0;
    for (const seed of TRIAL_SEEDS) {
      const estimates = bootstrapEstimates([lognormal(400, seed)], ['p50'], { resamples: 500, seed });
      if (estimates !== null && (estimates.p50.low as number) <= 1 && 1 <= (estimates.p50.high as number)) covered++;
    }
    const coverage = covered / TRIAL_SEEDS.length;
    expect(coverage).toBeGreaterThanOrEqual(0.91);
    expect(coverage).toBeLessThanOrEqual(0.99);
  });

  it('covers a lognormal p90 (true value e^1.2816) in about 95% of seeded trials', () => {
    const truth = Math.exp(1.2815516);
    let covered = 0;
    for (const seed of TRIAL_SEEDS) {
      const interval = singleRunPercentileInterval(sorted(lognormal(1000, seed)), 90, { resamples: 1000, seed });
      if (interval !== null && interval.low <= truth && truth <= interval.high) covered++;
    }
    expect(covered / TRIAL_SEEDS.length).toBeGreaterThanOrEqual(0.91);
    expect(covered / TRIAL_SEEDS.length).toBeLessThanOrEqual(0.99);
  });

  it('draws p99 by order statistics with the distribution of resampling the requests (within Monte Carlo error)', () => {
    const values = lognormal(2000, 7);
    const ascending = sorted(values);
    const exact = orderStatisticBootstrapDraws(ascending, 99, 20_000, new SeededRandom(3));
    const resampled = hierarchicalBootstrapDraws(new PooledRuns([values]), ['p99'], 20_000, new SeededRandom(4)).get('p99') as Float64Array;
    // The draws pile up on the run's own top values, so compare their distributions where the interval's ends fall:
    // the share of draws at or below each of the 40 largest values (20,000 draws: a standard error under 0.004).
    const shareAtOrBelow = (draws: Float64Array, limit: number): number => draws.filter((draw) => draw <= limit).length / draws.length;
    for (const limit of ascending.slice(-40)) expect(Math.abs(shareAtOrBelow(exact, limit) - shareAtOrBelow(resampled, limit))).toBeLessThan(0.015);
  });

  it('takes each resample\'s statistics exactly: the counting walk against sorting the drawn values (same draws)', () => {
    const runs = [lognormal(37, 1), lognormal(50, 2).map((value) => value * 1.2), lognormal(23, 3)];
    const draws = hierarchicalBootstrapDraws(new PooledRuns(runs), ['mean', 'p50', 'p90', 'p99'], 25, new SeededRandom(8));
    // The same generator, the same order of draws: a run, then that run's values, for as many runs as there are.
    const random = new SeededRandom(8);
    for (let resample = 0; resample < 25; resample++) {
      const drawn: number[] = [];
      for (let pick = 0; pick < runs.length; pick++) {
        const run = runs[Math.floor(random.next() * runs.length)] as Float64Array;
        for (let draw = 0; draw < run.length; draw++) drawn.push(run[Math.floor(random.next() * run.length)] as number);
      }
      const ascending = Float64Array.from(drawn).sort();
      expect(draws.get('mean')?.[resample]).toBeCloseTo(drawn.reduce((sum, value) => sum + value, 0) / drawn.length, 12);
      for (const [statistic, q] of [['p50', 50], ['p90', 90], ['p99', 99]] as const) expect(draws.get(statistic)?.[resample]).toBe(percentileOfSorted(ascending, q));
    }
  });

  it('is reproducible: the same values and seed give the same interval', () => {
    const values = lognormal(500, 11);
    expect(bootstrapEstimates([values, values], ['p90', 'mean'], { seed: 5 })).toEqual(bootstrapEstimates([values, values], ['p90', 'mean'], { seed: 5 }));
  });

  it('widens with the spread between runs: the two-level bootstrap against the same values pooled as one run', () => {
    // Four runs whose medians differ (a host state each): 0.8, 0.9, 1.1, 1.25 times the same requests.
    const runs = [0.8, 0.9, 1.1, 1.25].map((scale, index) => lognormal(500, 20 + index).map((value) => value * scale));
    const pooledAsOne = new Float64Array(runs.flatMap((run) => Array.from(run)));
    const twoLevel = bootstrapEstimates(runs, ['p50'], { seed: 1 })?.p50;
    const oneLevel = bootstrapEstimates([pooledAsOne], ['p50'], { seed: 1 })?.p50;
    expect(twoLevel?.method).toBe('bootstrap-runs-requests');
    expect(twoLevel?.runs).toBe(4);
    expect(twoLevel?.requests).toBe(2000);
    expect(twoLevel?.estimate).toBeCloseTo(oneLevel?.estimate as number, 12);
    const width = (estimate: typeof twoLevel): number => (estimate?.high as number) - (estimate?.low as number);
    expect(width(twoLevel)).toBeGreaterThan(1.5 * width(oneLevel));
  });

  it('marks a real shift beyond the noise and a same-distribution pair within it', () => {
    const before = [lognormal(1000, 101), lognormal(1000, 102)];
    const same = [lognormal(1000, 201), lognormal(1000, 202)];
    const shifted = [lognormal(1000, 301).map((value) => value * 1.3), lognormal(1000, 302).map((value) => value * 1.3)];
    const within = bootstrapDifference(before, same, 'p50');
    const beyond = bootstrapDifference(before, shifted, 'p50');
    expect(within?.beyondNoise).toBe(false);
    expect(within?.low).toBeLessThan(0);
    expect(within?.high).toBeGreaterThan(0);
    expect(beyond?.beyondNoise).toBe(true);
    expect(beyond?.low).toBeGreaterThan(0);
  });

  it('gives per-run figures a t interval over runs, and none for one run', () => {
    const estimate = perRunEstimate([10, 11, 12, 13], 400);
    expect(estimate.method).toBe('t-over-runs');
    expect(estimate.estimate).toBe(11.5);
    // s = 1.291, t(3) = 3.182: 11.5 ± 2.054
    expect(estimate.low).toBeCloseTo(11.5 - 3.182 * (1.2909944 / 2), 3);
    expect(perRunEstimate([10], 100)).toMatchObject({ low: null, high: null, method: 'none' });
  });

  it('gives the same intervals from values ordered only around the percentiles as from fully sorted ones', () => {
    const values = lognormal(100_000, 9);
    const banded = orderPercentileBands(Float64Array.from(values), PRECISION_PERCENTILES);
    expect(banded).not.toEqual(sorted(values)); // most of it is left unsorted
    expect(runPrecision([['x', banded]])).toEqual(runPrecision([['x', sorted(values)]]));
  });

  it('states how many values a p99 rests on and how many of the largest decide it', () => {
    expect(p99DecidedByTop(1980)).toBe(20);
    expect(p99DecidedByTop(100)).toBe(1);
    expect(p99DecidedByTop(1)).toBe(0);
    const precision = runPrecision([['ttftSeconds', sorted(lognormal(1980, 4))]]);
    const ttft = precision.metrics['ttftSeconds'];
    expect(ttft?.values).toBe(1980);
    expect(ttft?.p99DecidedByTop).toBe(20);
    expect(ttft?.p99.low).toBeLessThan(ttft?.p99.estimate as number);
    expect(ttft?.p99.high).toBeGreaterThan(ttft?.p99.estimate as number);
  });
});
