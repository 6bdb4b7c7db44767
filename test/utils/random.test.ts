import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../src/utils/random.js';
describe('seeded random', () => {
  it('repeats for one seed and differs across seeds', () => {
    const first = new SeededRandom(42);
    const second = new SeededRandom(42);
    const other = new SeededRandom(43);
    const a = Array.from({ length: 5 }, () => first.next());
    expect(Array.from({ length: 5 }, () => second.next())).toEqual(a);
    expect(Array.from({ length: 5 }, () => other.next())).not.toEqual(a);
    for (const value of a) expect(value).toBeGreaterThanOrEqual(0);
  });

  it('fills an array with the very integers, in order, that integer() draws, and leaves the same state behind', () => {
    for (const [min, max] of [[0, 31_999], [5, 5], [-3, 7], [0, 2 ** 32 - 1]] as const) {
      const drawn = new SeededRandom(7);
      const filled = new SeededRandom(7);
      const expected = Array.from({ length: 1000 }, () => drawn.integer(min, max));
      const target = new Array<number>(1000);
      filled.fillIntegers(target, min, max);
      expect(target).toEqual(expected);
      expect(filled.nextUint32()).toBe(drawn.nextUint32());
    }
    // Into a typed array, as the random-ids dataset does.
    const ids = new Uint16Array(300);
    new SeededRandom(9).fillIntegers(ids, 0, 65_535);
    const reference = new SeededRandom(9);
    expect(Array.from(ids)).toEqual(Array.from({ length: 300 }, () => reference.integer(0, 65_535)));
  });
});
