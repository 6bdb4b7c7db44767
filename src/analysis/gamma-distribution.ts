/**
 * The gamma law's distribution function, for testing gamma inter-arrival gaps (shape k = burstiness, scale
 * 1 / (rate × k), docs/workloads.md). The regularized lower incomplete gamma P(k, x) by its power series below x = k + 1
 * and by its continued fraction (modified Lentz) above, where each converges fast.
 */

/** ln Γ(x) for x > 0 (Lanczos, g = 7, nine coefficients: about 15 significant digits). */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const coefficients = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
    -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  const shifted = x - 1;
  let series = coefficients[0] as number;
  for (let index = 1; index < coefficients.length; index++) series += (coefficients[index] as number) / (shifted + index);
  const t = shifted + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (shifted + 0.5) * Math.log(t) - t + Math.log(series);
}

const EPSILON = 1e-15;
const MAX_ITERATIONS = 10_000;

/** P(shape, x) = γ(shape, x) / Γ(shape), the regularized lower incomplete gamma function. */
export function regularizedLowerGamma(shape: number, x: number): number {
  if (x <= 0) return 0;
  const logPrefix = shape * Math.log(x) - x - logGamma(shape);
  if (x < shape + 1) {
    // Σ x^n / (shape (shape+1) ... (shape+n)), times x^shape e^-x / Γ(shape).
    let term = 1 / shape;
    let sum = term;
    for (let n = 1; n < MAX_ITERATIONS; n++) {
      term *= x / (shape + n);
      sum += term;
      if (Math.abs(term) < Math.abs(sum) * EPSILON) break;
    }
    return Math.min(1, sum * Math.exp(logPrefix));
  }
  // Q(shape, x) by its continued fraction, then P = 1 − Q.
  const tiny = 1e-300;
  let b = x + 1 - shape;
  let c = 1 / tiny;
  let d = 1 / b;
  let fraction = d;
  for (let n = 1; n < MAX_ITERATIONS; n++) {
    const a = -n * (n - shape);
    b += 2;
    d = a * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + a / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const step = d * c;
    fraction *= step;
    if (Math.abs(step - 1) < EPSILON) break;
  }
  return Math.max(0, 1 - Math.exp(logPrefix) * fraction);
}

/** The gamma law's distribution function at x, for a shape and a scale. */
export function gammaCdf(x: number, shape: number, scale: number): number {
  return regularizedLowerGamma(shape, x / scale);
}
