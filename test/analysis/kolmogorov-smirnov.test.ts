import { describe, expect, it } from 'vitest';
import { kolmogorovSmirnovPValue, kolmogorovSmirnovTest } from '../../src/analysis/kolmogorov-smirnov.js';
import { gammaCdf } from '../../src/analysis/gamma-distribution.js';

// Reference values from scipy 1.17.1: `scipy.stats.kstwo.sf(d, n)` (the exact two-sided distribution), and
// `scipy.stats.kstest(x, dist.cdf)` on the sample below (its default method, exact for this size).
const KSTWO_SF: readonly [number, number, number][] = [
  [10, 0.274, 0.3715203845434957],
  [50, 0.1, 0.6623112704658186],
  [50, 0.2, 0.03143877776953241],
  [199, 0.05, 0.6831952322133245],
  [199, 0.12, 0.005914195102119366],
  [1000, 0.02, 0.8108971656895577],
  [1000, 0.05, 0.013012074781090332],
  [5000, 0.01, 0.6954557253913853],
  [5000, 0.03, 0.00024159234422666817],
  [20000, 0.006, 0.4657689508612477],
  [20000, 0.02, 2.2181270070049744e-7],
  [100000, 0.003, 0.3284563327726956],
];

const SAMPLE = [0.011, 0.042, 0.0031, 0.097, 0.025, 0.0066, 0.018, 0.054, 0.0012, 0.033, 0.071, 0.0089, 0.015, 0.128, 0.0047, 0.039, 0.022, 0.061, 0.0095, 0.0028];

describe('Kolmogorov–Smirnov p-value', () => {
  it.each(KSTWO_SF)('n = %s, D = %s: scipy kstwo.sf %s', (count, distance, expected) => {
    const pValue = kolmogorovSmirnovPValue(count, distance);
    // Within 0.5% of the value, and 0.002 absolute where the limit with Stephens' correction answers.
    expect(Math.abs(pValue - expected)).toBeLessThan(Math.max(expected * 0.005, count > 2000 && expected > 0.1 ? 0.002 : 0));
  });

  it('the test on a fixed sample against the exponential law equals scipy.stats.kstest (D 0.13986, p 0.77895)', () => {
    const sorted = [...SAMPLE].sort((a, b) => a - b);
    const result = kolmogorovSmirnovTest(sorted, (x) => 1 - Math.exp(-40 * x));
    expect(result?.statistic).toBeCloseTo(0.13986392879923526, 12);
    expect(result?.pValue).toBeCloseTo(0.7789488201063471, 4);
  });

  it('and against a gamma law (shape 0.5, mean 1/40): D 0.21212, p 0.28662', () => {
    expect(gammaCdf(0.03, 0.5, 0.05)).toBeCloseTo(0.7266783217077017, 12);
    expect(gammaCdf(0.17, 2.5, 0.1)).toBeCloseTo(0.36143007689620493, 12);
    expect(gammaCdf(3, 7, 1)).toBeCloseTo(0.033508535308841216, 12);
    const sorted = [...SAMPLE].sort((a, b) => a - b);
    const result = kolmogorovSmirnovTest(sorted, (x) => gammaCdf(x, 0.5, 1 / (40 * 0.5)));
    expect(result?.statistic).toBeCloseTo(0.2121214472027974, 10);
    expect(result?.pValue).toBeCloseTo(0.2866235888250982, 4);
  });
});
