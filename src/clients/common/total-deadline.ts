import type { Milliseconds } from '../../types/time.js';

/**
 * The default total deadline of one request, from its own size: what the slowest server still worth measuring needs.
 * - 600 s before anything: as long as the default first-byte deadline, for a wait in an overloaded queue and the prefill;
 * - 1 ms per prompt token: prefill at 1,000 tokens a second, far below any GPU's;
 * - 250 ms per output token: decode at 4 tokens a second, below a request in the largest batch of a loaded server.
 * A 1,024-in/1,024-out request gets 857 s, a 128-token answer 633 s, a 32k-token answer 2.4 h. Six hours for every
 * request (SGLang bench_serving's aiohttp total, the earlier default) let one server that dripped keep-alive bytes
 * hold a whole run for six hours.
 */
export function totalDeadlineMsForSize(inputTokens: number, outputTokens: number): Milliseconds {
  return TOTAL_DEADLINE_BASE_MS + TOTAL_DEADLINE_MS_PER_INPUT_TOKEN * Math.max(0, inputTokens) + TOTAL_DEADLINE_MS_PER_OUTPUT_TOKEN * Math.max(0, outputTokens);
}

export const TOTAL_DEADLINE_BASE_MS = 600_000;
export const TOTAL_DEADLINE_MS_PER_INPUT_TOKEN = 1;
export const TOTAL_DEADLINE_MS_PER_OUTPUT_TOKEN = 250;
