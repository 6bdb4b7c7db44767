import type { EngineFinishReason, EngineRequestInput } from '../../types/engine.js';

/**
 * What the simulated engine answers a request it refuses or cannot finish, in one place so that the scheduler
 * (sim-engine.ts) reads as scheduling. Which check refuses what, and where (before the scheduler or in it), follows
 * SGLang's tokenizer manager and scheduler (python/sglang/srt/managers/tokenizer_manager.py, scheduler.py).
 */

/** The message of an abort a client asked for (its connection closed). */
export const CLIENT_ABORT_MESSAGE = 'Abort request';

/**
 * Checks a request the way SGLang's tokenizer manager does before it reaches the scheduler; returns the error message
 * of the 400 answer, or null when the request is acceptable.
 */
export function tokenizerRefusal(input: EngineRequestInput, contextLength: number): string | null {
  const promptLength = input.promptTokenIds.length;
  if (promptLength === 0) return 'The input is empty: send a non-empty text or input_ids.';
  if (!Number.isInteger(input.maxNewTokens) || input.maxNewTokens < 0) {
    return `max_new_tokens must be a non-negative integer, got ${String(input.maxNewTokens)}.`;
  }
  if (promptLength >= contextLength) {
    return `The input (${promptLength} tokens) is longer than the model's context length (${contextLength} tokens).`;
  }
  if (promptLength + input.maxNewTokens > contextLength) {
    return (
      `Requested token count exceeds the model's maximum context length of ${contextLength} tokens. ` +
      `You requested a total of ${promptLength + input.maxNewTokens} tokens: ${promptLength} tokens from the input ` +
      `messages and ${input.maxNewTokens} tokens for the completion. Please reduce the number of tokens in the ` +
      `input messages or the completion to fit within the limit.`
    );
  }
  return null;
}

/** The scheduler's abort of a prompt at or over max_req_input_len (answered 400 at its next scheduling round). */
export function inputTooLongAbort(promptLength: number, maxRequestInputTokens: number): EngineFinishReason {
  return {
    type: 'abort',
    message:
      `Input length (${promptLength} tokens) exceeds the maximum allowed length ` +
      `(${maxRequestInputTokens} tokens). Use a shorter input or enable --allow-auto-truncate.`,
    status_code: 400,
    err_type: 'BadRequestError',
  };
}

/** The abort of a running request that retraction cannot save: alone, it still has no KV slot for its next token. */
export function kvCacheFullAbort(): EngineFinishReason {
  return { type: 'abort', message: 'The KV cache is full and the request cannot continue: raise --max-total-tokens.' };
}
