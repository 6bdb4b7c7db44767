import type { Milliseconds } from '../../types/time.js';
import type { EngineRequest } from './engine-request.js';
import type { PrefixCache } from './prefix-cache.js';

/**
 * The engine's KV token pool (SGLang's token-to-KV allocator together with the radix cache's share of it): tokens
 * requests own outright, tokens the prefix cache holds (some evictable), allocation with eviction, and the hand-over
 * of a request's KV to the cache when its prefill ends or it finishes.
 *
 * KV is handed out in whole pages of `pageSize` slots, as SGLang's paged allocator does
 * (python/sglang/srt/mem_cache/allocator/paged.py: the pool is `size // page_size` pages, `available_size()` is free
 * pages x page size, and a request of L tokens holds ceil(L / page) pages, its last one partly empty). Every count here
 * is in slots, so a request's partly filled last page counts whole. The prefix cache holds whole pages only
 * (radix_cache.py `page_align_keys`), so a request's cached prefix ends on a page boundary and what it owns outright,
 * its tokens past that prefix, takes ceil(owned / page) pages. At page size 1 slots and tokens are the same.
 */
export class KvPool {
  /** Capacity in slots: SGLang rounds max_total_num_tokens down to whole pages (model_runner). */
  readonly maxTotalTokens: number;
  readonly pageSize: number;
  readonly #cache: PrefixCache;
  /** KV slots requests own outright (not shared through the prefix cache), reservations included: whole pages. */
  #requestOwnedTokens = 0;
  /** Of those, slots reserved for KV still on its way from a prefill server (a PD decode server's preallocation). */
  #reservedTokens = 0;

  constructor(maxTotalTokens: number, cache: PrefixCache, pageSize = 1) {
    this.pageSize = pageSize;
    this.maxTotalTokens = Math.floor(maxTotalTokens / pageSize) * pageSize;
    this.#cache = cache;
  }

  /** `tokens` rounded up to whole pages: the slots they occupy. */
  slotsFor(tokens: number): number {
    const page = this.pageSize;
    return page === 1 ? tokens : Math.ceil(tokens / page) * page;
  }

  /** Slots in use: owned by requests or held by the cache, less what the cache could evict. */
  get usedTokens(): number {
    return this.#requestOwnedTokens + this.#cache.totalTokens - this.#cache.evictableTokens;
  }

  /** Slots free now plus what the cache could give up. */
  get availableTokens(): number {
    return this.maxTotalTokens - this.#requestOwnedTokens - this.#cache.totalTokens + this.#cache.evictableTokens;
  }

  /**
   * Slots the next decode step needs for these requests: one page for each whose KV fills its pages exactly (its next
   * token starts a new page), SGLang's `new_page_count_next_decode` x page size (schedule_batch.py). At page size 1
   * every request needs one.
   */
  decodeSlotsNeeded(requests: readonly EngineRequest[]): number {
    if (this.pageSize === 1) return requests.length;
    let slots = 0;
    for (const request of requests) slots += this.slotsToGrow(request, 1);
    return slots;
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

  /** Slots that `tokens` more KV tokens for this request take: the pages its owned part grows by. */
  slotsToGrow(request: EngineRequest, tokens: number): number {
    return this.slotsFor(request.ownedKvTokens + tokens) - this.slotsFor(request.ownedKvTokens);
  }

  allocate(request: EngineRequest, tokens: number): void {
    const slots = this.slotsToGrow(request, tokens);
    this.ensureFree(slots);
    request.ownedKvTokens += tokens;
    this.#requestOwnedTokens += slots;
  }

  /**
   * Gives the first `length` tokens of a request's sequence to the cache, cut down to whole pages (the partly filled
   * last page stays the request's, as SGLang's cache_unfinished_req keeps it in the request's prefix indices). Tokens
   * beyond the request's old lock either become new cache entries (their KV moves over) or duplicate entries already
   * cached (their copy is freed).
   */
  moveIntoCache(request: EngineRequest, length: number, nowMs: Milliseconds, keepLock: boolean): void {
    const pageLength = length - (length % this.pageSize);
    const inserted = this.#cache.insert(request, pageLength, nowMs, request.lockedHandle, request.lockedPrefixLength);
    const movedOrFreed = pageLength - request.lockedPrefixLength;
    const slotsBefore = this.slotsFor(request.ownedKvTokens);
    request.ownedKvTokens -= movedOrFreed;
    this.#requestOwnedTokens -= slotsBefore - this.slotsFor(request.ownedKvTokens);
    if (request.lockedHandle !== null) this.#cache.unlock(request.lockedHandle);
    if (keepLock) {
      this.#cache.lock(inserted.handle);
      request.lockedHandle = inserted.handle;
      request.lockedPrefixLength = pageLength;
    } else {
      request.lockedHandle = null;
      request.lockedPrefixLength = 0;
    }
  }

  get reservedTokens(): number {
    return this.#reservedTokens;
  }

  /**
   * Reserves slots for `tokens` of KV that a prefill server will write into (SGLang's decode preallocation allocates
   * the prompt's KV before the transfer starts, python/sglang/srt/disaggregation/decode.py `_pre_alloc`), in whole pages.
   */
  reserve(tokens: number): void {
    const slots = this.slotsFor(tokens);
    this.ensureFree(slots);
    this.#requestOwnedTokens += slots;
    this.#reservedTokens += slots;
  }

  /** Gives back a reservation that will not be used (the request was cancelled before its KV arrived). */
  cancelReservation(tokens: number): void {
    const slots = this.slotsFor(tokens);
    this.#requestOwnedTokens -= slots;
    this.#reservedTokens -= slots;
  }

  /** Hands reserved slots, now holding the arrived KV, to the request that owns them. */
  claimReservation(request: EngineRequest, tokens: number): void {
    this.#reservedTokens -= this.slotsFor(tokens);
    request.ownedKvTokens += tokens;
  }

  /** Frees a request's KV; a finished request first gives its whole sequence to the cache (whole pages of it). */
  release(request: EngineRequest, insertIntoCache: boolean, nowMs: Milliseconds): void {
    if (insertIntoCache && this.#cache.enabled) {
      this.moveIntoCache(request, request.kvTokens, nowMs, false);
    } else if (request.lockedHandle !== null) {
      this.#cache.unlock(request.lockedHandle);
      request.lockedHandle = null;
      request.lockedPrefixLength = 0;
    }
    // What the cache did not take (the partly filled last page) is freed.
    this.#requestOwnedTokens -= this.slotsFor(request.ownedKvTokens);
    request.ownedKvTokens = 0;
    request.lockedPrefixLength = 0;
  }
}
