import { describe, expect, it } from 'vitest';
import { parseBandwidth } from '../../src/utils/parse-bandwidth.js';
import { isServelabError } from '../../src/errors/servelab-error.js';

describe('parseBandwidth', () => {
  it('reads bytes (GB/s, GiB/s) and bits (Gbit/s, Gbps): 25GB/s and 200Gbit/s are the same link', () => {
    expect(parseBandwidth('25GB/s')).toBe(25e9);
    expect(parseBandwidth('200Gbit/s')).toBe(25e9);
    expect(parseBandwidth('200 Gbps')).toBe(25e9);
    expect(parseBandwidth('1GiB/s')).toBe(1024 ** 3);
    expect(parseBandwidth('87.5GB/s')).toBe(87.5e9);
  });

  it('refuses a unit that could be bits or bytes, and anything without a known unit, saying how to write it', () => {
    for (const text of ['200Gb/s', '25', 'fast', '-3GB/s', '0GB/s', '25GB']) {
      let error: unknown;
      try {
        parseBandwidth(text);
      } catch (caught) {
        error = caught;
      }
      expect(isServelabError(error) && error.code === 'INVALID_CONFIG' && error.message.includes('25GB/s')).toBe(true);
    }
  });
});
