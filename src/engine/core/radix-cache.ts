import type { Milliseconds } from '../../types/time.js';
import type { CacheInsert, CacheMatch, PrefixCache, TokenSource } from './prefix-cache.js';

/** A node of the radix tree: the edge from its parent holds `key` tokens. */
class RadixNode {
  key: Int32Array;
  parent: RadixNode | null;
  /** Children by the first token of their edge. */
  readonly children = new Map<number, RadixNode>();
  /** Running requests holding this node (and so every ancestor) in use. */
  lockCount = 0;
  lastAccessMs: Milliseconds;

  constructor(key: Int32Array, parent: RadixNode | null, nowMs: Milliseconds) {
    this.key = key;
    this.parent = parent;
    this.lastAccessMs = nowMs;
  }
}

/**
 * SGLang's RadixAttention prefix cache over token ids: a compressed radix tree whose edges hold token runs. Requests
 * lock the path of the prefix they use (reference counts up to the root); unlocked leaves are evicted least recently
 * used first when the KV pool needs room. Matching splits an edge where a match ends, as SGLang's match_prefix does,
 * so a lock covers exactly the matched tokens.
 */
export class RadixCache implements PrefixCache {
  readonly enabled = true;
  #root = new RadixNode(new Int32Array(0), null, 0);
  #totalTokens = 0;
  #evictableTokens = 0;

  get totalTokens(): number {
    return this.#totalTokens;
  }

  get evictableTokens(): number {
    return this.#evictableTokens;
  }

  match(tokens: TokenSource, limit: number, nowMs: Milliseconds): CacheMatch {
    let node = this.#root;
    let position = 0;
    node.lastAccessMs = nowMs;
    while (position < limit) {
      const child = node.children.get(tokens.tokenAt(position));
      if (child === undefined) break;
      const shared = sharedLength(child.key, tokens, position, limit);
      child.lastAccessMs = nowMs;
      if (shared < child.key.length) {
        node = this.#split(child, shared);
        position += shared;
        break;
      }
      node = child;
      position += shared;
    }
    return { length: position, handle: node };
  }

  lock(handle: unknown): void {
    for (let node = handle as RadixNode | null; node !== null && node !== this.#root; node = node.parent) {
      if (node.lockCount === 0) this.#evictableTokens -= node.key.length;
      node.lockCount++;
    }
  }

  unlock(handle: unknown): void {
    for (let node = handle as RadixNode | null; node !== null && node !== this.#root; node = node.parent) {
      node.lockCount--;
      if (node.lockCount === 0) this.#evictableTokens += node.key.length;
    }
  }

  insert(tokens: TokenSource, length: number, nowMs: Milliseconds): CacheInsert {
    let node = this.#root;
    let position = 0;
    while (position < length) {
      const child = node.children.get(tokens.tokenAt(position));
      if (child === undefined) {
        const key = new Int32Array(length - position);
        for (let index = 0; index < key.length; index++) key[index] = tokens.tokenAt(position + index);
        const leaf = new RadixNode(key, node, nowMs);
        node.children.set(key[0] as number, leaf);
        this.#totalTokens += key.length;
        this.#evictableTokens += key.length;
        return { handle: leaf, addedTokens: key.length };
      }
      const shared = sharedLength(child.key, tokens, position, length);
      child.lastAccessMs = nowMs;
      node = shared < child.key.length ? this.#split(child, shared) : child;
      position += shared;
    }
    return { handle: node, addedTokens: 0 };
  }

  evict(tokens: number): number {
    if (tokens <= 0 || this.#evictableTokens === 0) return 0;
    // Unlocked leaves, oldest first; a parent whose last child goes becomes a leaf and a candidate itself.
    const heap = new LeafHeap();
    const stack: RadixNode[] = [this.#root];
    while (stack.length > 0) {
      const node = stack.pop() as RadixNode;
      if (node.children.size === 0) {
        if (node !== this.#root && node.lockCount === 0) heap.push(node);
      } else {
        for (const child of node.children.values()) stack.push(child);
      }
    }
    let freed = 0;
    while (freed < tokens) {
      const leaf = heap.pop();
      if (leaf === undefined) break;
      const parent = leaf.parent as RadixNode;
      parent.children.delete(leaf.key[0] as number);
      leaf.parent = null;
      freed += leaf.key.length;
      this.#totalTokens -= leaf.key.length;
      this.#evictableTokens -= leaf.key.length;
      if (parent !== this.#root && parent.children.size === 0 && parent.lockCount === 0) heap.push(parent);
    }
    return freed;
  }

  reset(): void {
    this.#root = new RadixNode(new Int32Array(0), null, 0);
    this.#totalTokens = 0;
    this.#evictableTokens = 0;
  }

  /** Splits `child`'s edge after `at` tokens; returns the new upper node (it ends exactly `at` tokens in). */
  #split(child: RadixNode, at: number): RadixNode {
    const parent = child.parent as RadixNode;
    const upper = new RadixNode(child.key.subarray(0, at), parent, child.lastAccessMs);
    upper.lockCount = child.lockCount;
    parent.children.set(upper.key[0] as number, upper);
    child.key = child.key.subarray(at);
    child.parent = upper;
    upper.children.set(child.key[0] as number, child);
    return upper;
  }
}

function sharedLength(key: Int32Array, tokens: TokenSource, position: number, limit: number): number {
  const most = Math.min(key.length, limit - position);
  let index = 0;
  while (index < most && key[index] === tokens.tokenAt(position + index)) index++;
  return index;
}

/** A binary min-heap of nodes by last access time. */
class LeafHeap {
  readonly #items: RadixNode[] = [];

  push(node: RadixNode): void {
    const items = this.#items;
    items.push(node);
    let index = items.length - 1;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      if ((items[parentIndex] as RadixNode).lastAccessMs <= node.lastAccessMs) break;
      items[index] = items[parentIndex] as RadixNode;
      index = parentIndex;
    }
    items[index] = node;
  }

  pop(): RadixNode | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      let index = 0;
      for (;;) {
        const left = index * 2 + 1;
        const right = left + 1;
        let smallest = index;
        let smallestTime = last.lastAccessMs;
        if (left < items.length && (items[left] as RadixNode).lastAccessMs < smallestTime) {
          smallest = left;
          smallestTime = (items[left] as RadixNode).lastAccessMs;
        }
        if (right < items.length && (items[right] as RadixNode).lastAccessMs < smallestTime) smallest = right;
        if (smallest === index) break;
        items[index] = items[smallest] as RadixNode;
        index = smallest;
      }
      items[index] = last;
    }
    return top;
  }
}
