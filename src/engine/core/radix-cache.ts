import type { Milliseconds } from '../../types/time.js';
import { MinHeap } from '../../utils/min-heap.js';
import type { CacheInsert, CacheMatch, PrefixCache, TokenSource } from './prefix-cache.js';

/**
 * A node of the radix tree: the edge from its parent holds `length` tokens, `source[offset]` onwards. Prompt tokens are
 * referenced in the request's own prompt array (no copy); generated tokens are materialized once.
 */
class RadixNode {
  source: ArrayLike<number>;
  offset: number;
  length: number;
  parent: RadixNode | null;
  /** Children by the first token of their edge (by its first page's tokens when pages are longer than one token). */
  readonly children = new Map<ChildKey, RadixNode>();
  /** Running requests holding this node (and so every ancestor) in use. */
  lockCount = 0;
  lastAccessMs: Milliseconds;

  constructor(source: ArrayLike<number>, offset: number, length: number, parent: RadixNode | null, nowMs: Milliseconds) {
    this.source = source;
    this.offset = offset;
    this.length = length;
    this.parent = parent;
    this.lastAccessMs = nowMs;
  }

  get firstToken(): number {
    return this.source[this.offset] as number;
  }
}

type ChildKey = number | string;

const EMPTY = new Int32Array(0);

/**
 * SGLang's RadixAttention prefix cache over token ids: a compressed radix tree whose edges hold token runs. Requests
 * lock the path of the prefix they use (reference counts up to the root); unlocked leaves are evicted least recently
 * used first when the KV pool needs room. Matching splits an edge where a match ends, as SGLang's match_prefix does,
 * so a lock covers exactly the matched tokens.
 *
 * With a page size above one token it holds whole pages only, as SGLang's radix cache does
 * (python/sglang/srt/mem_cache/radix_cache.py: `match_prefix` cuts the key to whole pages, keys are compared page by
 * page and a child is found by its first page, `page_align_keys` before an insert): a match, a split and an edge
 * all end on a page boundary, so a prompt that shares 100 tokens with a cached one at page size 64 reuses 64.
 */
export class RadixCache implements PrefixCache {
  readonly enabled = true;
  readonly pageSize: number;
  #root = new RadixNode(EMPTY, 0, 0, null, 0);
  #totalTokens = 0;
  #evictableTokens = 0;
  /** Unlocked nodes without children: the only eviction candidates, kept up to date so eviction never scans the tree. */
  #evictableLeaves = new Set<RadixNode>();
  /**
   * Eviction candidates by last access, kept across evictions (rebuilding a heap of every leaf on each eviction made
   * eviction cost grow with the cache). Entries go stale when a leaf is used again or stops being a leaf; they are
   * checked when they come out, and the heap is rebuilt when stale entries outnumber live ones.
   */
  #candidates = new MinHeap<RadixNode>();

  constructor(pageSize = 1) {
    this.pageSize = pageSize;
  }

  #markEvictable(node: RadixNode): void {
    this.#evictableLeaves.add(node);
    this.#candidates.push(node.lastAccessMs, node);
  }

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
    limit = this.#pageFloor(limit);
    while (position < limit) {
      const child = node.children.get(this.#keyAt(tokens, position));
      if (child === undefined) break;
      const shared = this.#pageFloor(sharedLength(child, tokens, position, limit));
      child.lastAccessMs = nowMs;
      if (shared < child.length) {
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
      if (node.lockCount === 0) {
        this.#evictableTokens -= node.length;
        if (node.children.size === 0) this.#evictableLeaves.delete(node);
      }
      node.lockCount++;
    }
  }

  unlock(handle: unknown): void {
    for (let node = handle as RadixNode | null; node !== null && node !== this.#root; node = node.parent) {
      node.lockCount--;
      if (node.lockCount === 0) {
        this.#evictableTokens += node.length;
        if (node.children.size === 0) this.#markEvictable(node);
      }
    }
  }

  insert(
    tokens: TokenSource,
    length: number,
    nowMs: Milliseconds,
    startHandle?: unknown,
    startLength = 0,
  ): CacheInsert {
    // A locked node cannot have been evicted, and splits keep the node that ends at its depth, so it is a valid start.
    length = this.#pageFloor(length);
    let node = startHandle instanceof RadixNode && startLength <= length ? startHandle : this.#root;
    let position = node === this.#root ? 0 : startLength;
    for (let ancestor: RadixNode | null = node; ancestor !== null; ancestor = ancestor.parent) ancestor.lastAccessMs = nowMs;
    while (position < length) {
      const child = node.children.get(this.#keyAt(tokens, position));
      if (child === undefined) {
        const added = length - position;
        this.#appendLeaves(node, tokens, position, length, nowMs);
        this.#totalTokens += added;
        this.#evictableTokens += added;
        return { handle: this.#lastAppended as RadixNode, addedTokens: added };
      }
      const shared = this.#pageFloor(sharedLength(child, tokens, position, length));
      child.lastAccessMs = nowMs;
      node = shared < child.length ? this.#split(child, shared) : child;
      position += shared;
    }
    return { handle: node, addedTokens: 0 };
  }

  #lastAppended: RadixNode | null = null;

  /** Adds tokens [from, to) under `parent`: prompt tokens by reference, generated tokens copied. */
  #appendLeaves(parent: RadixNode, tokens: TokenSource, from: number, to: number, nowMs: Milliseconds): void {
    let node = parent;
    let position = from;
    if (parent.children.size === 0) this.#evictableLeaves.delete(parent);
    const prompt = tokens.promptTokenIds;
    const promptLength = tokens.promptLength ?? 0;
    // The prompt part by reference up to its last whole page; the page that holds prompt and output tokens together
    // is materialized with the output, so every edge stays whole pages.
    const promptEnd = from + this.#pageFloor(Math.min(to, promptLength) - from);
    if (prompt !== undefined && position < promptEnd) {
      const leaf = new RadixNode(prompt, position, promptEnd - position, node, nowMs);
      node.children.set(this.#keyOf(leaf), leaf);
      node = leaf;
      position = promptEnd;
    }
    if (position < to) {
      const key = new Int32Array(to - position);
      for (let index = 0; index < key.length; index++) key[index] = tokens.tokenAt(position + index);
      const leaf = new RadixNode(key, 0, key.length, node, nowMs);
      node.children.set(this.#keyOf(leaf), leaf);
      node = leaf;
    }
    this.#markEvictable(node);
    this.#lastAppended = node;
  }

  evict(tokens: number): number {
    if (tokens <= 0 || this.#evictableTokens === 0) return 0;
    if (this.#candidates.size > 2 * this.#evictableLeaves.size + 1024) {
      this.#candidates = new MinHeap<RadixNode>();
      for (const leaf of this.#evictableLeaves) this.#candidates.push(leaf.lastAccessMs, leaf);
    }
    // Unlocked leaves, least recently used first; a parent whose last child goes becomes a leaf and a candidate itself.
    const heap = this.#candidates;
    let freed = 0;
    while (freed < tokens) {
      // The key it was pushed with: the leaf's last access then.
      const keyMs = heap.peekKey();
      const leaf = heap.pop();
      if (leaf === undefined) break;
      if (!this.#evictableLeaves.has(leaf)) continue;
      if (leaf.lastAccessMs !== keyMs) {
        heap.push(leaf.lastAccessMs, leaf);
        continue;
      }
      const parent = leaf.parent as RadixNode;
      parent.children.delete(this.#keyOf(leaf));
      leaf.parent = null;
      this.#evictableLeaves.delete(leaf);
      freed += leaf.length;
      this.#totalTokens -= leaf.length;
      this.#evictableTokens -= leaf.length;
      if (parent !== this.#root && parent.children.size === 0 && parent.lockCount === 0) this.#markEvictable(parent);
    }
    return freed;
  }

  reset(): void {
    this.#evictableLeaves = new Set();
    this.#candidates = new MinHeap<RadixNode>();
    this.#root = new RadixNode(EMPTY, 0, 0, null, 0);
    this.#totalTokens = 0;
    this.#evictableTokens = 0;
  }

  /** Splits `child`'s edge after `at` tokens; returns the new upper node (it ends exactly `at` tokens in). */
  #split(child: RadixNode, at: number): RadixNode {
    const parent = child.parent as RadixNode;
    const upper = new RadixNode(child.source, child.offset, at, parent, child.lastAccessMs);
    upper.lockCount = child.lockCount;
    parent.children.set(this.#keyOf(upper), upper);
    child.offset += at;
    child.length -= at;
    child.parent = upper;
    upper.children.set(this.#keyOf(child), child);
    return upper;
  }

  /** `tokens` cut down to whole pages. */
  #pageFloor(tokens: number): number {
    return this.pageSize === 1 ? tokens : tokens - (tokens % this.pageSize);
  }

  /** The child key of the edge that starts at `position` of a sequence: its first token, or its first page's tokens. */
  #keyAt(tokens: TokenSource, position: number): ChildKey {
    if (this.pageSize === 1) return tokens.tokenAt(position);
    let key = '';
    for (let index = 0; index < this.pageSize; index++) key += `${tokens.tokenAt(position + index)},`;
    return key;
  }

  #keyOf(node: RadixNode): ChildKey {
    if (this.pageSize === 1) return node.firstToken;
    let key = '';
    for (let index = 0; index < this.pageSize; index++) key += `${node.source[node.offset + index] as number},`;
    return key;
  }
}

function sharedLength(node: RadixNode, tokens: TokenSource, position: number, limit: number): number {
  const most = Math.min(node.length, limit - position);
  const source = node.source;
  const offset = node.offset;
  let index = 0;
  while (index < most && source[offset + index] === tokens.tokenAt(position + index)) index++;
  return index;
}
