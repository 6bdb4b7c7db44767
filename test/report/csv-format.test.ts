import { describe, expect, it } from 'vitest';
import { csvField, formatSeconds, parseCsv } from '../../src/report/csv/csv-format.js';

describe('csv format', () => {
  it('quotes per RFC 4180 only when needed and leaves absent values empty', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField(' padded')).toBe('" padded"');
    expect(csvField(undefined)).toBe('');
    expect(csvField(Number.NaN)).toBe('');
    expect(csvField(false)).toBe('false');
  });

  it('writes seconds to the microsecond without trailing zeros', () => {
    expect(formatSeconds(1.5)).toBe('1.5');
    expect(formatSeconds(0.0000004)).toBe('0');
    expect(formatSeconds(-0.0000004)).toBe('0');
    expect(formatSeconds(12.3456789)).toBe('12.345679');
    expect(formatSeconds(3)).toBe('3');
    expect(formatSeconds(undefined)).toBe('');
  });

  it('parses what it writes, including quoted separators and line breaks', () => {
    const line = ['id', csvField('a,"b"\nc'), '', csvField(2.5)].join(',');
    expect(parseCsv(`h1,h2,h3,h4\r\n${line}\n`)).toEqual([
      ['h1', 'h2', 'h3', 'h4'],
      ['id', 'a,"b"\nc', '', '2.5'],
    ]);
  });
});

describe('formatSeconds against toFixed', () => {
  it('agrees with toFixed(6) without trailing zeros over many values', () => {
    let seed = 99;
    const next = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (let index = 0; index < 2000; index++) {
      const value = (next() - 0.2) * 10 ** Math.floor(next() * 5);
      // Skip exact half-microsecond ties, where toFixed and rounding may legitimately differ.
      if (Math.abs(((value * 1e6) % 1) - 0.5) < 1e-6) continue;
      const expected = value.toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
      expect(formatSeconds(value), String(value)).toBe(expected === '-0' ? '0' : expected);
    }
    expect(formatSeconds(-1.25)).toBe('-1.25');
    expect(formatSeconds(0.000001)).toBe('0.000001');
    expect(formatSeconds(100)).toBe('100');
  });
});

describe('spreadsheet formulas in cells (issue 11)', () => {
  it('neutralises text that a spreadsheet would run, but not plain numbers', () => {
    expect(csvField('=HYPERLINK("http://evil.example","x")')).toBe(`"'=HYPERLINK(""http://evil.example"",""x"")"`);
    expect(csvField('+cmd')).toBe("'+cmd");
    expect(csvField('-2+3')).toBe("'-2+3");
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvField('\tx')).toBe("'\tx");
    expect(csvField('\rx')).toBe(`"'\rx"`);
    expect(csvField('-1.5')).toBe('-1.5');
    expect(csvField('-3e-7')).toBe('-3e-7');
    expect(csvField('+4')).toBe('+4');
    expect(csvField('HTTP 500: =1+1')).toBe('HTTP 500: =1+1');
  });
});
