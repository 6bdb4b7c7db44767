import type { ProtocolName } from '../../../src/clients/registry.js';

/** What one protocol's server sends, so that one conformance suite can script every protocol. */
export interface ProtocolWire {
  protocol: ProtocolName;
  path: string;
  /**
   * The data of one streamed event that brings the cumulative count of generated tokens to `totalTokens`. With
   * `withUsage`, OpenAI-compatible chunks carry usage (continuous usage stats), which is how they tell that one chunk
   * carried several tokens; SGLang events always carry `meta_info.completion_tokens`.
   */
  tokenEvent(totalTokens: number, options?: { finish?: string; withUsage?: boolean }): string;
  /** Events sent after the finishing event and before `[DONE]` (OpenAI's usage chunk), if any. */
  trailingEvents(promptTokens: number, totalTokens: number): string[];
  errorEvent(message: string): string;
  /** A non-streaming answer. */
  wholeBody(promptTokens: number, totalTokens: number, finish: string): string;
  /** Whether one event can carry several tokens without usage on every chunk. */
  countsTokensWithoutUsage: boolean;
}

export const PROMPT_TOKENS = 8;

export const sglangWire: ProtocolWire = {
  protocol: 'sglang',
  path: '/generate',
  tokenEvent(totalTokens, options = {}) {
    return JSON.stringify({
      text: ' word'.repeat(totalTokens),
      output_ids: Array.from({ length: totalTokens }, (_, index) => 1000 + index),
      meta_info: {
        id: 'rid-under-test',
        finish_reason: options.finish === undefined ? null : { type: options.finish, length: totalTokens },
        prompt_tokens: PROMPT_TOKENS,
        weight_version: 'default',
        num_retractions: 0,
        completion_tokens: totalTokens,
        cached_tokens: 0,
      },
    });
  },
  trailingEvents: () => [],
  errorEvent: (message) => JSON.stringify({ error: { message } }),
  wholeBody(promptTokens, totalTokens, finish) {
    return JSON.stringify({
      text: ' word'.repeat(totalTokens),
      output_ids: Array.from({ length: totalTokens }, (_, index) => 1000 + index),
      meta_info: {
        id: 'rid-under-test',
        finish_reason: { type: finish, length: totalTokens },
        prompt_tokens: promptTokens,
        completion_tokens: totalTokens,
        cached_tokens: 2,
        e2e_latency: 0.1,
      },
    });
  },
  countsTokensWithoutUsage: true,
};

function openAiUsage(promptTokens: number, totalTokens: number): Record<string, unknown> {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: totalTokens,
    total_tokens: promptTokens + totalTokens,
    prompt_tokens_details: { cached_tokens: 2 },
  };
}

export const openAiCompletionsWire: ProtocolWire = {
  protocol: 'openai-completions',
  path: '/v1/completions',
  tokenEvent(totalTokens, options = {}) {
    return JSON.stringify({
      id: 'cmpl-under-test',
      object: 'text_completion',
      created: 1_760_000_000,
      model: 'test-model',
      choices: [{ index: 0, text: ' word', logprobs: null, finish_reason: options.finish ?? null, matched_stop: null }],
      usage: options.withUsage === true ? openAiUsage(PROMPT_TOKENS, totalTokens) : null,
    });
  },
  trailingEvents: (promptTokens, totalTokens) => [
    JSON.stringify({
      id: 'cmpl-under-test',
      object: 'text_completion',
      created: 1_760_000_000,
      model: 'test-model',
      choices: [],
      usage: openAiUsage(promptTokens, totalTokens),
    }),
  ],
  errorEvent: (message) => JSON.stringify({ error: { message, type: 'InternalServerError', code: 500 } }),
  wholeBody(promptTokens, totalTokens, finish) {
    return JSON.stringify({
      id: 'cmpl-under-test',
      object: 'text_completion',
      created: 1_760_000_000,
      model: 'test-model',
      choices: [{ index: 0, text: ' word'.repeat(totalTokens), logprobs: null, finish_reason: finish }],
      usage: openAiUsage(promptTokens, totalTokens),
    });
  },
  countsTokensWithoutUsage: false,
};

export const openAiChatWire: ProtocolWire = {
  protocol: 'openai-chat',
  path: '/v1/chat/completions',
  tokenEvent(totalTokens, options = {}) {
    return JSON.stringify({
      id: 'chatcmpl-under-test',
      object: 'chat.completion.chunk',
      created: 1_760_000_000,
      model: 'test-model',
      choices: [
        {
          index: 0,
          delta: { role: null, content: ' word', reasoning_content: null, tool_calls: null },
          logprobs: null,
          finish_reason: options.finish ?? null,
          matched_stop: null,
        },
      ],
      usage: options.withUsage === true ? openAiUsage(PROMPT_TOKENS, totalTokens) : null,
    });
  },
  trailingEvents: (promptTokens, totalTokens) => [
    JSON.stringify({
      id: 'chatcmpl-under-test',
      object: 'chat.completion.chunk',
      created: 1_760_000_000,
      model: 'test-model',
      choices: [],
      usage: openAiUsage(promptTokens, totalTokens),
    }),
  ],
  errorEvent: (message) => JSON.stringify({ object: 'error', message, type: 'BadRequestError', param: null, code: 400 }),
  wholeBody(promptTokens, totalTokens, finish) {
    return JSON.stringify({
      id: 'chatcmpl-under-test',
      object: 'chat.completion',
      created: 1_760_000_000,
      model: 'test-model',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: ' word'.repeat(totalTokens), reasoning_content: null, tool_calls: null },
          logprobs: null,
          finish_reason: finish,
          matched_stop: null,
        },
      ],
      usage: openAiUsage(promptTokens, totalTokens),
    });
  },
  countsTokensWithoutUsage: false,
};
