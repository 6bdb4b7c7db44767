/**
 * The one-sample Kolmogorov–Smirnov test: the largest distance D between a sample's empirical distribution and a law's
 * distribution function, and the probability of a distance at least D for a sample of that size drawn from the law
 * (two-sided, the law fully specified, not fitted to the sample).
 *
 * The p-value is exact where that is cheap and an approximation whose error is far below the decision's scale
 * elsewhere (test/analysis/kolmogorov-smirnov.test.ts checks it against scipy's kstwo):
 * - in the upper tail (p ≤ 0.1) twice the exact one-sided probability (Smirnov's sum): the two one-sided events
 *   almost never happen together there, so the doubled one-sided tail is the two-sided tail to about 1e-5 of itself;
 * - else, when n·D is small, the exact distribution by Marsaglia, Tsang and Wang's matrix method (J. Stat. Softw. 8(18),
 *   2003, "Evaluating Kolmogorov's distribution");
 * - else (n above a couple of thousand and p above 0.1) Kolmogorov's limit with Stephens' finite-sample correction.
 */

import { logGamma } from './gamma-distribution.js';

export interface KolmogorovSmirnovResult {
  /** Values tested. */
  count: number;
  /** The largest distance between the sample's and the law's distribution functions. */
  statistic: number;
  /** Probability of a distance at least `statistic` for `count` values drawn from the law. */
  pValue: number;
}

/** D of ascending `sorted` values against the distribution function `cdf`. */
export function ksStatistic(sorted: ArrayLike<number>, cdf: (value: number) => number): number {
  const count = sorted.length;
  let distance = 0;
  for (let index = 0; index < count; index++) {
    const law = cdf(sorted[index] as number);
    // The empirical function jumps from index/n to (index+1)/n at this value: both sides of the jump count.
    const above = (index + 1) / count - law;
    const below = law - index / count;
    if (above > distance) distance = above;
    if (below > distance) distance = below;
  }
  return distance;
}

/** The whole test on ascending values; null for an empty sample. */
export function kolmogorovSmirnovTest(sorted: ArrayLike<number>, cdf: (value: number) => number): KolmogorovSmirnovResult | null {
  if (sorted.length === 0) return null;
  const statistic = ksStatistic(sorted, cdf);
  return { count: sorted.length, statistic, pValue: kolmogorovSmirnovPValue(sorted.length, statistic) };
}

/** P(D⁺ ≥ d), D⁺ = sup(F_n − F): Smirnov's exact sum over j ≤ n(1 − d), each term in logs (n may be a million). */
export function smirnovUpperTail(count: number, distance: number): number {
  if (distance <= 0) return 1;
  if (distance >= 1) return 0;
  const logCountFactorial = logGamma(count + 1);
  const last = Math.floor(count * (1 - distance));
  let sum = 0;
  for (let j = 0; j <= last; j++) {
    const left = distance + j / count;
    const right = 1 - left;
    if (right <= 0 && count - j > 0) continue;
    const logTerm =
      logCountFactorial - logGamma(j + 1) - logGamma(count - j + 1) + (j - 1) * Math.log(left) + (count - j === 0 ? 0 : (count - j) * Math.log(right));
    sum += Math.exp(logTerm);
  }
  return Math.min(1, distance * sum);
}

/** Largest matrix order (2k − 1, k = ⌊n·d⌋ + 1) the exact method is used at: its cost grows with the cube of it. */
const MAX_EXACT_ORDER = 121;

/** Multiplies two m×m row-major matrices. */
function multiply(left: Float64Array, right: Float64Array, order: number): Float64Array {
  const product = new Float64Array(order * order);
  for (let i = 0; i < order; i++) {
    for (let k = 0; k < order; k++) {
      const factor = left[i * order + k] as number;
      if (factor === 0) continue;
      for (let j = 0; j < order; j++) product[i * order + j] = (product[i * order + j] as number) + factor * (right[k * order + j] as number);
    }
  }
  return product;
}

const SCALE = 1e140;
const SCALE_EXPONENT = 140;

/** H^power with a decimal exponent kept aside, so entries neither overflow nor underflow over n multiplications. */
function power(matrix: Float64Array, order: number, exponent: number): { value: Float64Array; decimalExponent: number } {
  if (exponent === 1) return { value: matrix, decimalExponent: 0 };
  const half = power(matrix, order, Math.floor(exponent / 2));
  let value = multiply(half.value, half.value, order);
  let decimalExponent = 2 * half.decimalExponent;
  if (exponent % 2 === 1) value = multiply(matrix, value, order);
  const centre = Math.floor(order / 2);
  if ((value[centre * order + centre] as number) > SCALE) {
    for (let index = 0; index < value.length; index++) value[index] = (value[index] as number) / SCALE;
    decimalExponent += SCALE_EXPONENT;
  }
  return { value, decimalExponent };
}

/** P(D_n < d) exactly, by the matrix method; for n·d small enough that the matrix stays small. */
export function kolmogorovCdfExact(count: number, distance: number): number {
  const k = Math.floor(count * distance) + 1;
  const order = 2 * k - 1;
  const h = k - count * distance;
  const matrix = new Float64Array(order * order);
  for (let i = 0; i < order; i++) for (let j = 0; j < order; j++) matrix[i * order + j] = i - j + 1 >= 0 ? 1 : 0;
  for (let i = 0; i < order; i++) {
    matrix[i * order] = (matrix[i * order] as number) - h ** (i + 1);
    matrix[(order - 1) * order + i] = (matrix[(order - 1) * order + i] as number) - h ** (order - i);
  }
  if (2 * h - 1 > 0) matrix[(order - 1) * order] = (matrix[(order - 1) * order] as number) + (2 * h - 1) ** order;
  for (let i = 0; i < order; i++) {
    for (let j = 0; j < order; j++) {
      for (let g = 1; g <= i - j + 1; g++) matrix[i * order + j] = (matrix[i * order + j] as number) / g;
    }
  }
  const raised = power(matrix, order, count);
  let value = raised.value[(k - 1) * order + (k - 1)] as number;
  let decimalExponent = raised.decimalExponent;
  // n!/n^n, folded in a factor at a time with the same rescaling.
  for (let i = 1; i <= count; i++) {
    value = (value * i) / count;
    if (value < 1 / SCALE) {
      value *= SCALE;
      decimalExponent -= SCALE_EXPONENT;
    }
  }
  return value * 10 ** decimalExponent;
}

/** Kolmogorov's limiting survival function P(K > λ), by whichever of its two series converges fast at λ. */
export function kolmogorovLimitSurvival(lambda: number): number {
  if (lambda <= 0) return 1;
  if (lambda < 1.18) {
    // P(K ≤ λ) = sqrt(2π)/λ Σ exp(−(2j−1)²π²/(8λ²)), fast for small λ.
    let sum = 0;
    for (let j = 1; j <= 20; j++) sum += Math.exp(-((2 * j - 1) ** 2) * Math.PI ** 2 / (8 * lambda * lambda));
    return 1 - (Math.sqrt(2 * Math.PI) / lambda) * sum;
  }
  let sum = 0;
  for (let j = 1; j <= 100; j++) {
    const term = Math.exp(-2 * j * j * lambda * lambda);
    sum += j % 2 === 1 ? term : -term;
    if (term < 1e-17) break;
  }
  return Math.min(1, Math.max(0, 2 * sum));
}

/** The upper-tail p-value at which the doubled one-sided tail is used as it is. */
const DOUBLED_TAIL_LIMIT = 0.1;

/** P(D_n ≥ d), two-sided (see the module comment for which method answers where). */
export function kolmogorovSmirnovPValue(count: number, distance: number): number {
  if (count <= 0 || distance <= 0) return 1;
  if (distance >= 1) return 0;
  const doubledTail = 2 * smirnovUpperTail(count, distance);
  if (doubledTail <= DOUBLED_TAIL_LIMIT) return doubledTail;
  if (2 * (Math.floor(count * distance) + 1) - 1 <= MAX_EXACT_ORDER) return Math.min(1, Math.max(0, 1 - kolmogorovCdfExact(count, distance)));
  const rootCount = Math.sqrt(count);
  return kolmogorovLimitSurvival((rootCount + 0.12 + 0.11 / rootCount) * distance);
}
