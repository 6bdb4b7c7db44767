import type { Milliseconds } from '../../types/time.js';

/**
 * Reads token `position` of a sequence without materializing it (outputs are computed, not stored). When the sequence
 * starts with a stored prompt, exposing it lets the cache reference those tokens instead of copying them.
 */
export interface TokenSource {
  tokenAt(position: number): number;
  readonly promptTokenIds?: ArrayLike<number>;
  readonly promptLength?: number;
}

export interface CacheMatch {
  length: number;
  /** Opaque handle of the node where the match ends; pass it to lock/unlock. */
  handle: unknown;
}

export interface CacheInsert {
  handle: unknown;
  /** Tokens that were not in the cache before and now are (their KV moves from the request to the cache). */
  addedTokens: number;
}

/**
 * The prefix cache as the scheduler sees it. KV accounting: the pool's used tokens are the tokens requests own plus
 * every token in the cache; locked cache tokens are in use by a request, unlocked ones can be evicted (LRU) on demand.
 */
export interface PrefixCache {
  readonly enabled: boolean;
  /** Longest cached prefix among the first `limit` tokens of `tokens`; refreshes its recency. */
  match(tokens: TokenSource, limit: number, nowMs: Milliseconds): CacheMatch;
  lock(handle: unknown): void;
  unlock(handle: unknown): void;
  /**
   * Stores the first `length` tokens of `tokens`. When the caller holds a lock on a node that ends `startLength`
   * tokens into the same sequence, passing it skips re-walking that prefix (the hot path: a finished request's prompt
   * is already cached under its own lock).
   */
  insert(tokens: TokenSource, length: number, nowMs: Milliseconds, startHandle?: unknown, startLength?: number): CacheInsert;
  readonly totalTokens: number;
  readonly evictableTokens: number;
  /** Frees at least `tokens` unlocked tokens if it can, least recently used first; returns how many it freed. */
  evict(tokens: number): number;
  /** Drops every unlocked entry (`/flush_cache`). */
  reset(): void;
}

/** `--disable-radix-cache`: nothing is ever cached. */
export class DisabledPrefixCache implements PrefixCache {
  readonly enabled = false;
  readonly totalTokens = 0;
  readonly evictableTokens = 0;

  match(): CacheMatch {
    return { length: 0, handle: null };
  }

  lock(): void {}

  unlock(): void {}

  insert(): CacheInsert {
    return { handle: null, addedTokens: 0 };
  }

  evict(): number {
    return 0;
  }

  reset(): void {}
}
