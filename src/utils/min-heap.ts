/**
 * A binary min-heap of values by a numeric key, kept in two parallel arrays (no entry object per push). The radix
 * cache orders its eviction candidates by last access with it, and the cache-aware tree its tenants' leaves.
 */
export class MinHeap<T> {
  readonly #keys: number[] = [];
  readonly #values: T[] = [];

  get size(): number {
    return this.#values.length;
  }

  push(key: number, value: T): void {
    const keys = this.#keys;
    const values = this.#values;
    let index = values.length;
    keys.push(key);
    values.push(value);
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if ((keys[parent] as number) <= key) break;
      keys[index] = keys[parent] as number;
      values[index] = values[parent] as T;
      index = parent;
    }
    keys[index] = key;
    values[index] = value;
  }

  /** The smallest key, or undefined when empty. */
  peekKey(): number | undefined {
    return this.#keys[0];
  }

  /** Removes and returns the value with the smallest key (undefined when empty). */
  pop(): T | undefined {
    const keys = this.#keys;
    const values = this.#values;
    if (values.length === 0) return undefined;
    const top = values[0];
    const lastKey = keys.pop() as number;
    const lastValue = values.pop() as T;
    const count = values.length;
    if (count > 0) {
      // Sift the last entry down from the root.
      let index = 0;
      for (;;) {
        const left = index * 2 + 1;
        const right = left + 1;
        let smallest = index;
        let smallestKey = lastKey;
        if (left < count && (keys[left] as number) < smallestKey) {
          smallest = left;
          smallestKey = keys[left] as number;
        }
        if (right < count && (keys[right] as number) < smallestKey) smallest = right;
        if (smallest === index) break;
        keys[index] = keys[smallest] as number;
        values[index] = values[smallest] as T;
        index = smallest;
      }
      keys[index] = lastKey;
      values[index] = lastValue;
    }
    return top;
  }
}
