import { describe, expect, it } from 'vitest';
import { MinHeap } from '../../src/utils/min-heap.js';
import { SeededRandom } from '../../src/utils/random.js';

describe('MinHeap', () => {
  it('gives values back in key order, across interleaved pushes and pops, ties included', () => {
    const random = new SeededRandom(3);
    const heap = new MinHeap<number>();
    const held: { key: number; id: number }[] = [];
    let id = 0;
    for (let step = 0; step < 5000; step++) {
      if (held.length === 0 || random.next() < 0.6) {
        const key = random.integer(0, 50);
        heap.push(key, id);
        held.push({ key, id: id++ });
      } else {
        const smallest = Math.min(...held.map((entry) => entry.key));
        expect(heap.peekKey()).toBe(smallest);
        const value = heap.pop() as number;
        const index = held.findIndex((entry) => entry.id === value);
        expect(held[index]?.key).toBe(smallest);
        held.splice(index, 1);
      }
      expect(heap.size).toBe(held.length);
    }
    const rest: number[] = [];
    for (let key = heap.peekKey(); key !== undefined; key = heap.peekKey()) {
      rest.push(key);
      heap.pop();
    }
    expect(rest).toEqual(held.map((entry) => entry.key).sort((a, b) => a - b));
    expect(heap.pop()).toBeUndefined();
    expect(heap.peekKey()).toBeUndefined();
  });
});
