/**
 * SGLang's default `--num-reserved-decode-tokens`: KV room a decode server keeps for each request's coming decode
 * tokens when it preallocates a new request's prompt (python/sglang/srt/server_args.py).
 */
export const DEFAULT_NUM_RESERVED_DECODE_TOKENS = 512;

/** What the preallocation rule reads of the decode server's engine. */
export interface PreallocEngineState {
  /** KV slots free or evictable now (reservations already taken out). */
  availableKvTokens: number;
  /** Requests running or waiting in the engine (each keeps decode room reserved). */
  runningAndWaitingRequests: number;
}

/** A request in the decode server's prealloc queue: its prompt length. */
export interface PreallocCandidate {
  promptTokens: number;
}

/**
 * How many requests at the head of the prealloc queue get their prompt's KV reserved now, as SGLang's
 * DecodePreallocQueue.pop_preallocated (python/sglang/srt/disaggregation/decode.py): the allocatable tokens are the free
 * ones less `reservedDecodeTokens` for every request running, waiting or in the transfer queue (`_allocatable_tokens`);
 * the queue is served in order, each request needing its prompt plus `reservedDecodeTokens`, and the first that does
 * not fit stops it (so its prefill server keeps it in the bootstrap queue meanwhile). Left out: the check that one
 * request alone could reach max_new_tokens with every other retracted, and page rounding here (the reservation itself
 * takes whole pages, src/engine/core/kv-pool.ts).
 * SGLang's expression for the reservation has an operator-precedence slip (`len(running) if running_batch else 0 +
 * len(transfer) + len(waiting)`); the sim follows its evident intent and counts all three.
 */
export function preallocatableCount(
  queue: readonly PreallocCandidate[],
  engine: PreallocEngineState,
  transferringRequests: number,
  reservedDecodeTokens: number,
): number {
  let allocatable = engine.availableKvTokens - reservedDecodeTokens * (engine.runningAndWaitingRequests + transferringRequests);
  let count = 0;
  for (const candidate of queue) {
    const required = candidate.promptTokens + reservedDecodeTokens;
    if (required > allocatable) break;
    allocatable -= required;
    count++;
  }
  return count;
}
