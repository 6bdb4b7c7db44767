/**
 * The decimal text of `units / scale` (scale = 10^width) without trailing zeros, from integers: the fraction's digits
 * are those of `fraction + scale` after its leading 1, so no division or padding per digit.
 */
export function decimalOfUnits(units: number, scale: number, width: number): string {
  if (units === 0) return '0';
  const negative = units < 0;
  const absolute = negative ? -units : units;
  const whole = Math.floor(absolute / scale);
  const fraction = absolute - whole * scale;
  let text = String(whole);
  if (fraction !== 0) {
    const digits = String(fraction + scale);
    let end = width + 1;
    while (digits.charCodeAt(end - 1) === 48) end--;
    text += `.${digits.slice(1, end)}`;
  }
  return negative ? `-${text}` : text;
}

/** How many decimal digits a non-negative int32 has. */
export function decimalDigitCount(value: number): number {
  if (value < 100_000) return value < 10 ? 1 : value < 100 ? 2 : value < 1000 ? 3 : value < 10_000 ? 4 : 5;
  return value < 1e6 ? 6 : value < 1e7 ? 7 : value < 1e8 ? 8 : value < 1e9 ? 9 : 10;
}
