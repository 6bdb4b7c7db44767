import type { NiceStep } from './nice-step.js';

/**
 * A tick value as a label with exactly the decimals its step needs (0.0025 steps: four; 50 steps: none), thousands
 * grouped; a step finer than a millionth or values of a billion and more use exponent notation instead of a run of
 * zeros.
 */
export function tickLabel(value: number, step: NiceStep, largestMagnitude: number): string {
  const decimals = Math.max(0, -step.exponent);
  if (decimals > 6 || largestMagnitude >= 1e9) return value === 0 ? '0' : exponentLabel(value, step);
  const [whole, fraction] = Math.abs(value).toFixed(decimals).split('.') as [string, string | undefined];
  const grouped = whole.replace(/\B(?=(\d{3})+$)/g, ',');
  return `${value < 0 ? '−' : ''}${grouped}${fraction === undefined ? '' : `.${fraction}`}`;
}

function exponentLabel(value: number, step: NiceStep): string {
  const valueExponent = Math.floor(Math.log10(Math.abs(value)));
  // Enough mantissa digits to tell neighbouring ticks apart.
  const digits = Math.min(15, Math.max(0, valueExponent - step.exponent));
  const [mantissa, exponent] = value.toExponential(digits).split('e') as [string, string];
  const trimmed = mantissa.includes('.') ? mantissa.replace(/\.?0+$/, '') : mantissa;
  return `${trimmed.replace('-', '−')}e${exponent.replace('+', '').replace('-', '−')}`;
}
