import type { Milliseconds } from '../../types/time.js';
import type { EngineRequest } from './engine-request.js';
import type { PrefixCache } from './prefix-cache.js';

/**
 * The engine's KV token pool (SGLang's token-to-KV allocator together with the radix cache's share of it): tokens
 * requests own outright, tokens the prefix cache holds (some evictable), allocation with eviction, and the hand-over
 * of a request's KV to the cache when its prefill ends or it finishes.
 */
export class KvPool {
  readonly maxTotalTokens: number;
  readonly #cache: PrefixCache;
  /** KV tokens requests own outright (not shared through the prefix cache), reservations included. */
  #requestOwnedTokens = 0;
  /** Of those, tokens reserved for KV still on its way from a prefill server (a PD decode server's preallocation). */
  #reservedTokens = 0;

  constructor(maxTotalTokens: number, cache: PrefixCache) {
    this.maxTotalTokens = maxTotalTokens;
    this.#cache = cache;
  }

  /** Tokens in use: owned by requests or held by the cache, less what the cache could evict. */
  get usedTokens(): number {
    return this.#requestOwnedTokens + this.#cache.totalTokens - this.#cache.evictableTokens;
  }

  /** KV tokens free now plus what the cache could give up. */
  get availableTokens(): number {
    return this.maxTotalTokens - this.#requestOwnedTokens - this.#cache.totalTokens + this.#cache.evictableTokens;
  }

  /**
   * Makes `tokens` KV slots free, evicting from the cache if needed. Evicting costs a scan of the cache's leaves, so
   * when it must happen it frees at least 1/128 of the pool at once instead of a few tokens every step (SGLang evicts
   * per batch allocation; the difference only shows as slightly fewer cached tokens right after an eviction).
   */
  ensureFree(tokens: number): void {
    const free = this.maxTotalTokens - this.#requestOwnedTokens - this.#cache.totalTokens;
    if (free >= tokens) return;
    this.#cache.evict(Math.max(tokens - free, Math.ceil(this.maxTotalTokens / 128)));
  }

  allocate(request: EngineRequest, tokens: number): void {
    this.ensureFree(tokens);
    request.ownedKvTokens += tokens;
    this.#requestOwnedTokens += tokens;
  }

  /**
   * Gives the first `length` tokens of a request's sequence to the cache. Tokens beyond the request's old lock either
   * become new cache entries (their KV moves over) or duplicate entries already cached (their copy is freed).
   */
  moveIntoCache(request: EngineRequest, length: number, nowMs: Milliseconds, keepLock: boolean): void {
    const inserted = this.#cache.insert(request, length, nowMs, request.lockedHandle, request.lockedPrefixLength);
    const movedOrFreed = length - request.lockedPrefixLength;
    request.ownedKvTokens -= movedOrFreed;
    this.#requestOwnedTokens -= movedOrFreed;
    if (request.lockedHandle !== null) this.#cache.unlock(request.lockedHandle);
    if (keepLock) {
      this.#cache.lock(inserted.handle);
      request.lockedHandle = inserted.handle;
      request.lockedPrefixLength = length;
    } else {
      request.lockedHandle = null;
      request.lockedPrefixLength = 0;
    }
  }

  get reservedTokens(): number {
    return this.#reservedTokens;
  }

  /**
   * Reserves `tokens` slots for KV that a prefill server will write into (SGLang's decode preallocation allocates the
   * prompt's KV before the transfer starts, python/sglang/srt/disaggregation/decode.py `_pre_alloc`).
   */
  reserve(tokens: number): void {
    this.ensureFree(tokens);
    this.#requestOwnedTokens += tokens;
    this.#reservedTokens += tokens;
  }

  /** Gives back a reservation that will not be used (the request was cancelled before its KV arrived). */
  cancelReservation(tokens: number): void {
    this.#requestOwnedTokens -= tokens;
    this.#reservedTokens -= tokens;
  }

  /** Hands reserved slots, now holding the arrived KV, to the request that owns them. */
  claimReservation(request: EngineRequest, tokens: number): void {
    this.#reservedTokens -= tokens;
    request.ownedKvTokens += tokens;
  }

  /** Frees a request's KV; a finished request first gives its whole sequence to the cache. */
  release(request: EngineRequest, insertIntoCache: boolean, nowMs: Milliseconds): void {
    if (insertIntoCache && this.#cache.enabled) {
      this.moveIntoCache(request, request.kvTokens, nowMs, false);
    } else if (request.lockedHandle !== null) {
      this.#cache.unlock(request.lockedHandle);
      request.lockedHandle = null;
      request.lockedPrefixLength = 0;
    }
    this.#requestOwnedTokens -= request.ownedKvTokens;
    request.ownedKvTokens = 0;
    request.lockedPrefixLength = 0;
  }
}
