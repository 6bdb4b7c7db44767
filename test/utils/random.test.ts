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
});
