import { describe, expect, it } from 'vitest';
import { DEFAULT_NUM_RESERVED_DECODE_TOKENS, preallocatableCount } from '../../../src/engine/disaggregation/decode-prealloc.js';

describe('preallocatableCount (SGLang DecodePreallocQueue.pop_preallocated)', () => {
  it("keeps the reserved decode tokens for every request running, waiting or transferring, and serves the queue in order", () => {
    expect(DEFAULT_NUM_RESERVED_DECODE_TOKENS).toBe(512);
    // 3000 free, two running: 3000 - 2 x 512 = 1976 allocatable. The first needs 1000 + 512 (476 left); the second
    // needs 500 + 512 and stops the queue, though the third (10 + 512) would fit: FIFO, as SGLang's loop breaks.
    const queue = [{ promptTokens: 1000 }, { promptTokens: 500 }, { promptTokens: 10 }];
    expect(preallocatableCount(queue, { availableKvTokens: 3000, runningAndWaitingRequests: 2 }, 0, 512)).toBe(1);
    // A request in the transfer queue reserves decode room too: now the first no longer fits.
    expect(preallocatableCount(queue, { availableKvTokens: 3000, runningAndWaitingRequests: 2 }, 1, 512)).toBe(0);
    expect(preallocatableCount(queue, { availableKvTokens: 10_000, runningAndWaitingRequests: 0 }, 0, 512)).toBe(3);
    expect(preallocatableCount(queue, { availableKvTokens: 10_000, runningAndWaitingRequests: 0 }, 0, 0)).toBe(3);
  });
});
