import { describe, expect, it } from 'vitest';
import { coefficientOfVariation, computeStatistics, percentileOfSorted } from '../../src/analysis/statistics.js';

describe('statistics', () => {
  it('interpolates percentiles linearly between closest ranks like numpy', () => {
    // numpy.percentile([1, 2, 3, 4, 10], q): rank = q/100 * 4.
    const sorted = [1, 2, 3, 4, 10];
    expect(percentileOfSorted(sorted, 50)).toBe(3);
    expect(percentileOfSorted(sorted, 90)).toBeCloseTo(7.6, 12); // rank 3.6: 4 + 0.6 * 6
    expect(percentileOfSorted(sorted, 95)).toBeCloseTo(8.8, 12);
    expect(percentileOfSorted(sorted, 99)).toBeCloseTo(9.76, 12);
    expect(percentileOfSorted(sorted, 0)).toBe(1);
    expect(percentileOfSorted(sorted, 100)).toBe(10);
    // numpy.percentile([10, 20], 25) == 12.5
    expect(percentileOfSorted([10, 20], 25)).toBe(12.5);
  });

  it('computes mean, population std, min, max and percentiles of unsorted values, ignoring NaN', () => {
    const statistics = computeStatistics([10, Number.NaN, 1, 4, 3, 2]);
    expect(statistics).not.toBeNull();
    expect(statistics?.count).toBe(5);
    expect(statistics?.mean).toBe(4);
    expect(statistics?.std).toBeCloseTo(Math.sqrt(10), 12); // numpy.std default ddof=0
    expect(statistics?.min).toBe(1);
    expect(statistics?.max).toBe(10);
    expect(statistics?.p50).toBe(3);
    expect(statistics?.p99).toBeCloseTo(9.76, 12);
  });

  it('returns null for no values and handles a single value', () => {
    expect(computeStatistics([])).toBeNull();
    expect(computeStatistics([Number.NaN])).toBeNull();
    expect(computeStatistics([7])).toEqual({ count: 1, mean: 7, std: 0, min: 7, p50: 7, p90: 7, p95: 7, p99: 7, max: 7 });
  });

  it('computes the coefficient of variation', () => {
    expect(coefficientOfVariation([2, 2, 2])).toBe(0);
    expect(coefficientOfVariation([1, 3])).toBeCloseTo(0.5, 12); // std 1, mean 2
    expect(coefficientOfVariation([5])).toBeNull();
  });
});

describe('selection-based percentiles', () => {
  it('match a full sort on random data with many duplicates', () => {
    let seed = 12345;
    const next = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (const size of [2, 3, 10, 101, 1000, 4099]) {
      const values = Array.from({ length: size }, () => Math.floor(next() * 50) / 7);
      const sorted = [...values].sort((a, b) => a - b);
      const statistics = computeStatistics(values);
      for (const q of [50, 90, 95, 99] as const) {
        expect(statistics?.[`p${q}`], `p${q} of ${size}`).toBeCloseTo(percentileOfSorted(sorted, q), 12);
      }
      expect(statistics?.min).toBe(sorted[0]);
      expect(statistics?.max).toBe(sorted[size - 1]);
    }
  });
});

describe('multiSelectInPlace', () => {
  it('puts every wanted order statistic in place, on data with and without duplicates', async () => {
    const { multiSelectInPlace } = await import('../../src/analysis/statistics.js');
    let seed = 7;
    const next = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (const size of [1, 2, 3, 5, 17, 100, 1001, 5000]) {
      for (const distinct of [3, 1000000]) {
        const values = Float64Array.from({ length: size }, () => Math.floor(next() * distinct));
        const sorted = Float64Array.from(values).sort();
        const ranks = [...new Set([0, Math.floor(size / 2), Math.floor(size * 0.9), size - 1].filter((rank) => rank < size))].sort((a, b) => a - b);
        multiSelectInPlace(values, ranks);
        for (const rank of ranks) expect(values[rank], `rank ${rank} of ${size}`).toBe(sorted[rank]);
      }
    }
  });
});
