import { describe, expect, it } from 'vitest';
import { Float64Arena } from '../../src/analysis/float-arena.js';

describe('Float64Arena', () => {
  it('hands out disjoint zeroed views, int32 views aligned, and falls back to fresh arrays when exhausted', () => {
    const arena = new Float64Arena(10);
    const first = arena.take(4);
    first.fill(7);
    const ints = arena.takeInt32(3); // two doubles' worth
    ints.fill(-1);
    const second = arena.take(4);
    expect(Array.from(second)).toEqual([0, 0, 0, 0]);
    expect(Array.from(first)).toEqual([7, 7, 7, 7]);
    expect(Array.from(ints)).toEqual([-1, -1, -1]);
    expect(second.buffer).toBe(first.buffer);
    const overflow = arena.take(1);
    expect(overflow.buffer).not.toBe(first.buffer);
    expect(overflow.length).toBe(1);
  });
});
