import { describe, expect, it } from 'vitest';
import { empiricalCdf } from '../../src/analysis/cdf.js';

describe('empiricalCdf', () => {
  it('gives every order statistic of a small sample with its fraction, ignoring missing values', () => {
    expect(empiricalCdf([3, Number.NaN, 1, 2])).toEqual([
      { value: 1, fraction: 1 / 3 },
      { value: 2, fraction: 2 / 3 },
      { value: 3, fraction: 1 },
      { value: 3, fraction: 1 },
    ]);
    expect(empiricalCdf([])).toEqual([]);
  });

  it('thins a large sample but keeps the extremes', () => {
    const values = Float64Array.from({ length: 10_000 }, (_, index) => 10_000 - index);
    const points = empiricalCdf(values, 100);
    expect(points.length).toBeLessThanOrEqual(102);
    expect(points[0]).toEqual({ value: 1, fraction: 1 / 10_000 });
    expect(points.at(-1)).toEqual({ value: 10_000, fraction: 1 });
    for (let index = 1; index < points.length; index++) expect(points[index]?.value).toBeGreaterThanOrEqual(points[index - 1]?.value as number);
  });
});

describe('strideSample', () => {
  it('keeps everything when small and an even spread when large', async () => {
    const { strideSample } = await import('../../src/analysis/cdf.js');
    const items = Array.from({ length: 10 }, (_, index) => index);
    expect(strideSample(items, 20)).toBe(items);
    expect(strideSample(items, 4)).toEqual([0, 3, 6, 9]);
    expect(strideSample(items, 5)).toEqual([0, 2, 4, 6, 8]);
  });
});
