import { describe, expect, it } from 'vitest';
import { decimalOfUnits } from '../../src/utils/decimal-text.js';
import { SeededRandom } from '../../src/utils/random.js';
import { TextBytesWriter } from '../../src/utils/text-bytes-writer.js';

/** The string formatting the writer replaces, as each caller used it before. */
const referenceNumber = (value: number): string => String(value);
const referenceFixed = (units: number, width: number): string => decimalOfUnits(units, 10 ** width, width);

describe('TextBytesWriter', () => {
  it('writes numbers exactly as String() does, across magnitudes and signs', () => {
    const random = new SeededRandom(7);
    const values = [0, -0, 1, -1, 9, 10, 99, 100, 2 ** 31, 2 ** 32 + 5, 2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 53, 1e21, 1.5, -0.25, 1e-7, Number.MAX_VALUE];
    for (let index = 0; index < 20_000; index++) {
      const magnitude = 10 ** Math.floor(random.next() * 17);
      const value = Math.floor(random.next() * magnitude) * (random.next() < 0.3 ? -1 : 1);
      values.push(value, value + random.next());
    }
    const out = new TextBytesWriter(16);
    for (const value of values) {
      out.number(value);
      expect(out.takeText(), String(value)).toBe(referenceNumber(value));
    }
  });

  it('writes micro- and nanosecond counts as decimalOfUnits does, fallback included', () => {
    const random = new SeededRandom(11);
    const cases: [number, number][] = [[0, 6], [1, 6], [10, 6], [1_000_000, 6], [1_500_000, 6], [-1_500_000, 6], [-1, 9], [123_456_789, 9], [2 ** 53 + 2, 9], [1e300, 6], [Number.POSITIVE_INFINITY, 6]];
    for (let index = 0; index < 20_000; index++) {
      const width = random.next() < 0.5 ? 6 : 9;
      const units = Math.round((random.next() - 0.2) * 10 ** Math.floor(random.next() * 16));
      cases.push([units, width]);
    }
    const out = new TextBytesWriter(4);
    for (const [units, width] of cases) {
      out.fixedPoint(units, width);
      expect(out.takeText(), `${units} / 10^${width}`).toBe(referenceFixed(units, width));
    }
  });

  it('grows as needed and hands out copies', () => {
    const out = new TextBytesWriter(2);
    out.text('héllo, ');
    out.number(12345);
    const first = out.take();
    out.text('again');
    expect(first.toString('utf8')).toBe('héllo, 12345');
    expect(out.takeText()).toBe('again');
    expect(out.length).toBe(0);
  });
});
