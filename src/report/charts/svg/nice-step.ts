/** A tick step of the form mantissa × 10^exponent, mantissa 1, 2 or 5: what people read off an axis without effort. */
export interface NiceStep {
  mantissa: 1 | 2 | 5;
  exponent: number;
}

/** The nice step closest to rawStep (a positive, finite span divided by the wanted number of intervals). */
export function niceStep(rawStep: number): NiceStep {
  let exponent = Math.floor(Math.log10(rawStep));
  const fraction = rawStep / 10 ** exponent;
  // Cut points between 1, 2, 5 and 10 at their geometric means, so the step is the closest on a log scale.
  if (fraction < Math.SQRT2) return { mantissa: 1, exponent };
  if (fraction < Math.sqrt(10)) return { mantissa: 2, exponent };
  if (fraction < Math.sqrt(50)) return { mantissa: 5, exponent };
  exponent += 1;
  return { mantissa: 1, exponent };
}

/** k steps, computed so that 3 × 0.1 is 0.3 and not 0.30000000000000004 (the tick labels print it). */
export function stepMultiple(step: NiceStep, k: number): number {
  return step.exponent < 0 ? (k * step.mantissa) / 10 ** -step.exponent : k * step.mantissa * 10 ** step.exponent;
}

export function stepValue(step: NiceStep): number {
  return stepMultiple(step, 1);
}
