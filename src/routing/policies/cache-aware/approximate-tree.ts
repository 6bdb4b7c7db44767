import { MinHeap } from '../../../utils/min-heap.js';
import { PackedText } from './packed-text.js';
import { TokenIdsText } from './token-ids-text.js';

/** A node's characters: a string, or a long leaf tail held compactly (both read like a string). */
type NodeText = string | PackedText | TokenIdsText;

/**
 * A character-level radix tree shared by all workers ("tenants"), the data structure behind cache-aware routing.
 *
 * Each node holds a run of characters and the set of tenants whose requests passed through it, each with the logical
 * time of its last use. Overlaying every worker's tree in one structure lets a single walk find the longest prefix
 * any worker holds. Sizes are counted per tenant in characters, as sglang-router does; LRU eviction removes a tenant
 * from its least recently used leaves until its size is back under the bound.
 *
 * Time here is a logical counter (one tick per insert), not a clock: LRU only needs an order, and a counter keeps
 * the tree pure and identical in real and virtual time. Characters are UTF-16 code units (sglang-router counts
 * Unicode scalar values; the two differ only for characters outside the Basic Multilingual Plane).
 */
class TreeNode {
  /**
   * A long leaf tail of a token-id key is a view of the ids (TokenIdsText) when the caller keeps them, else packed
   * (PackedText); a split makes the part it cuts off a string.
   */
  text: NodeText;
  parent: TreeNode | undefined;
  /** Keyed by the first code unit of the child's text; made with the first child (most nodes are leaves). */
  children: Map<number, TreeNode> | undefined = undefined;
  /** Tenant → logical time of its last use of this node. */
  tenants: Map<string, number>;

  constructor(text: NodeText, parent: TreeNode | undefined, tenants: Map<string, number> = new Map()) {
    this.text = text;
    this.parent = parent;
    this.tenants = tenants;
  }
}

export interface PrefixMatch {
  /** How many leading characters of the text some candidate tenant holds. */
  matchedLength: number;
  /** The tenant holding that prefix (the most recently used one at the deepest node), if any. */
  tenant: string | undefined;
}

export class ApproximatePrefixTree {
  readonly #root = new TreeNode('', undefined);
  readonly #sizes = new Map<string, number>();
  #tick = 0;

  /** Registers a tenant with an empty tree, so it counts as the smallest until it receives text. */
  addTenant(tenant: string): void {
    if (!this.#sizes.has(tenant)) this.#sizes.set(tenant, 0);
    this.#root.tenants.set(tenant, ++this.#tick);
  }

  /** Characters held for `tenant` (0 when unknown). */
  sizeOf(tenant: string): number {
    return this.#sizes.get(tenant) ?? 0;
  }

  tenants(): string[] {
    return [...this.#sizes.keys()];
  }

  /**
   * Records that `tenant` was sent `text`: every node on its path is marked as used by `tenant` now. `tokenIds`, when
   * given, are the ids `text` was made of (joined by spaces) and are never changed afterwards: a new leaf is then a
   * view of them rather than a copy of its characters.
   */
  insert(text: string, tenant: string, tokenIds?: ArrayLike<number>): void {
    const tick = ++this.#tick;
    if (!this.#sizes.has(tenant)) this.#sizes.set(tenant, 0);
    this.#root.tenants.set(tenant, tick);
    let node = this.#root;
    let position = 0;
    while (position < text.length) {
      const existing = node.children?.get(text.charCodeAt(position));
      if (existing === undefined) {
        const leaf = new TreeNode(leafText(text, position, tokenIds), node, new Map([[tenant, tick]]));
        (node.children ??= new Map()).set(text.charCodeAt(position), leaf);
        this.#grow(tenant, leaf.text.length);
        return;
      }
      const shared = sharedPrefixLength(existing.text, text, position);
      let next = existing;
      if (shared < existing.text.length) {
        // Split: the shared part becomes a new node that inherits the tenants of the node it cuts.
        next = new TreeNode(headOf(existing.text, shared), node, new Map(existing.tenants));
        existing.text = tailOf(existing.text, shared);
        existing.parent = next;
        next.children = new Map([[existing.text.charCodeAt(0), existing]]);
        (node.children as Map<number, TreeNode>).set(next.text.charCodeAt(0), next);
      }
      if (!next.tenants.has(tenant)) this.#grow(tenant, next.text.length);
      next.tenants.set(tenant, tick);
      position += shared;
      node = next;
    }
  }

  /**
   * The longest prefix of `text` that any tenant accepted by `isCandidate` holds. The walk only enters nodes that
   * some candidate holds, so a prefix held only by an unhealthy worker never attracts a request. When the match ends
   * inside a node, that node's tenants count (as in sglang-router).
   */
  prefixMatch(text: string, isCandidate: (tenant: string) => boolean): PrefixMatch {
    let node = this.#root;
    let position = 0;
    while (position < text.length) {
      const child = node.children?.get(text.charCodeAt(position));
      if (child === undefined || !hasCandidate(child, isCandidate)) break;
      const shared = sharedPrefixLength(child.text, text, position);
      position += shared;
      node = child;
      if (shared < child.text.length) break;
    }
    return { matchedLength: position, tenant: mostRecentCandidate(node, isCandidate) };
  }

  /** Removes everything `tenant` holds (a worker left the router). */
  removeTenant(tenant: string): void {
    const stack: TreeNode[] = [this.#root];
    while (stack.length > 0) {
      const node = stack.pop() as TreeNode;
      for (const child of childrenOf(node)) {
        if (child.tenants.has(tenant)) stack.push(child);
      }
      node.tenants.delete(tenant);
      this.#dropIfEmpty(node);
    }
    this.#sizes.delete(tenant);
  }

  /**
   * Evicts `tenant`'s least recently used leaves until it holds at most `targetSize` characters. A node stays while
   * another tenant still uses it; a node nobody uses is removed.
   */
  evictTenant(tenant: string, targetSize: number): void {
    if (this.sizeOf(tenant) <= targetSize) return;
    const heap = new MinHeap<TreeNode>();
    // A tenant's nodes form a subtree from the root (insert marks whole paths), so the walk can prune early.
    const stack: TreeNode[] = [this.#root];
    while (stack.length > 0) {
      const node = stack.pop() as TreeNode;
      let isLeaf = true;
      for (const child of childrenOf(node)) {
        if (child.tenants.has(tenant)) {
          isLeaf = false;
          stack.push(child);
        }
      }
      if (isLeaf && node !== this.#root) heap.push(node.tenants.get(tenant) ?? 0, node);
    }
    while (this.sizeOf(tenant) > targetSize) {
      const node = heap.pop();
      if (node === undefined) break;
      node.tenants.delete(tenant);
      this.#grow(tenant, -node.text.length);
      const parent = node.parent;
      this.#dropIfEmpty(node);
      if (parent !== undefined && parent !== this.#root && parent.tenants.has(tenant) && !usedBelow(parent, tenant)) {
        heap.push(parent.tenants.get(tenant) ?? 0, parent);
      }
    }
  }

  /** Number of nodes (root excluded): for tests and diagnostics. */
  nodeCount(): number {
    let count = 0;
    const stack: TreeNode[] = [this.#root];
    while (stack.length > 0) {
      const node = stack.pop() as TreeNode;
      for (const child of childrenOf(node)) {
        count++;
        stack.push(child);
      }
    }
    return count;
  }

  #grow(tenant: string, characters: number): void {
    this.#sizes.set(tenant, (this.#sizes.get(tenant) ?? 0) + characters);
  }

  #dropIfEmpty(node: TreeNode): void {
    if (node === this.#root || node.tenants.size > 0 || node.parent === undefined) return;
    // Children of a node hold a subset of its tenants, so a node nobody uses has no used children left.
    node.parent.children?.delete(node.text.charCodeAt(0));
    node.parent = undefined;
  }
}

/** Tails at least this long are held compactly when they can be: shorter ones save too little for the work. */
const PACK_MIN_LENGTH = 64;

function leafText(text: string, from: number, tokenIds: ArrayLike<number> | undefined): NodeText {
  if (text.length - from < PACK_MIN_LENGTH) return text.slice(from);
  return (tokenIds === undefined ? undefined : TokenIdsText.at(tokenIds, from, text.length)) ?? PackedText.pack(text, from) ?? text.slice(from);
}

function headOf(nodeText: NodeText, count: number): string {
  return typeof nodeText === 'string' ? nodeText.slice(0, count) : nodeText.head(count);
}

function tailOf(nodeText: NodeText, from: number): NodeText {
  return typeof nodeText === 'string' ? nodeText.slice(from) : nodeText.tail(from);
}

function sharedPrefixLength(nodeText: NodeText, text: string, offset: number): number {
  if (typeof nodeText !== 'string') return nodeText.sharedPrefixLength(text, offset);
  // Most steps match a whole node (a shared system prompt): the native comparison settles those at once.
  if (text.startsWith(nodeText, offset)) return nodeText.length;
  const limit = Math.min(nodeText.length, text.length - offset);
  let index = 0;
  while (index < limit && nodeText.charCodeAt(index) === text.charCodeAt(offset + index)) index++;
  return index;
}

const NO_CHILDREN: readonly TreeNode[] = [];

function childrenOf(node: TreeNode): Iterable<TreeNode> {
  return node.children?.values() ?? NO_CHILDREN;
}

function hasCandidate(node: TreeNode, isCandidate: (tenant: string) => boolean): boolean {
  for (const tenant of node.tenants.keys()) if (isCandidate(tenant)) return true;
  return false;
}

function mostRecentCandidate(node: TreeNode, isCandidate: (tenant: string) => boolean): string | undefined {
  let best: string | undefined;
  let bestTick = -1;
  for (const [tenant, tick] of node.tenants) {
    if (tick > bestTick && isCandidate(tenant)) {
      best = tenant;
      bestTick = tick;
    }
  }
  return best;
}

function usedBelow(node: TreeNode, tenant: string): boolean {
  for (const child of childrenOf(node)) if (child.tenants.has(tenant)) return true;
  return false;
}
