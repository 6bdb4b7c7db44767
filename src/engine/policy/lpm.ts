import type { EngineRequestView, SchedulingContext, SchedulingPolicy } from '../../types/engine.js';

/**
 * SGLang's queue length above which `lpm` falls back to fcfs, because matching every waiting request against the radix
 * tree each step costs too much on long queues.
 */
export const LPM_FALLBACK_QUEUE_LENGTH = 128;
/**
 * SGLang's in-batch prefix caching (schedule_policy.py): a request whose cached prefix is at most this long is checked
 * against the other waiting requests...
 */
export const IN_BATCH_PREFIX_CHECK_THRESHOLD = 32;
/** ...and pushed to the back when it shares more than this many tokens with one ahead of it. */
export const IN_BATCH_PREFIX_DEPRIORITIZE_THRESHOLD = 32;

/**
 * Longest prefix match: requests with the most cached prompt tokens first (ties keep queue order). As SGLang does,
 * a request with a small cache hit (≤ 32 tokens) that shares a longer prefix (> 32 tokens) with a waiting request
 * ahead of it goes to the back, so the first of such a group is prefilled alone and the rest then hit its prefix
 * in the cache instead of computing it again in the same batch.
 */
export const lpmPolicy: SchedulingPolicy = {
  name: 'lpm',
  order(waiting: EngineRequestView[], context: SchedulingContext) {
    if (waiting.length > LPM_FALLBACK_QUEUE_LENGTH || waiting.length < 2) return;
    // Only whether a match exceeds the threshold matters, so the first threshold + 1 tokens identify a shared prefix.
    const keyLength = IN_BATCH_PREFIX_DEPRIORITIZE_THRESHOLD + 1;
    const seenPrefixes = new Set<string>();
    const keyed = waiting.map((request, position) => {
      const length = context.prefixLength(request);
      let deprioritized = false;
      if (length <= IN_BATCH_PREFIX_CHECK_THRESHOLD && request.promptLength >= keyLength) {
        const key = Array.prototype.slice.call(request.promptTokenIds, 0, keyLength).join(',');
        if (seenPrefixes.has(key)) deprioritized = true;
        else seenPrefixes.add(key);
      }
      return { request, position, length, deprioritized };
    });
    keyed.sort((left, right) => {
      if (left.deprioritized !== right.deprioritized) return left.deprioritized ? 1 : -1;
      if (left.deprioritized) return left.position - right.position;
      return right.length - left.length || left.position - right.position;
    });
    for (let index = 0; index < keyed.length; index++) waiting[index] = (keyed[index] as (typeof keyed)[number]).request;
  },
};
