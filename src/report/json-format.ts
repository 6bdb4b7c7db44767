/**
 * JSON for our files. JSON has no Infinity (`requestRate: Infinity` means "all at once"), so infinities are written as
 * the strings "Infinity" / "-Infinity" and read back as numbers; NaN (an undefined result) is written as null.
 */
export function toJson(value: unknown, indent = 2): string {
  return `${JSON.stringify(
    value,
    (_key, item: unknown) => {
      if (typeof item === 'number' && !Number.isFinite(item)) {
        if (Number.isNaN(item)) return null;
        return item > 0 ? 'Infinity' : '-Infinity';
      }
      if (item instanceof Float64Array) return Array.from(item);
      return item;
    },
    indent,
  )}\n`;
}

export function parseJson(text: string): unknown {
  return JSON.parse(text, (_key, item: unknown) => {
    if (item === 'Infinity') return Number.POSITIVE_INFINITY;
    if (item === '-Infinity') return Number.NEGATIVE_INFINITY;
    return item;
  });
}
