import type { ProtocolName } from '../../../src/clients/registry.js';
import type { ClientOutcome } from '../../../src/types/record.js';

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
  /** SGLang generations only: the server timing keys its events carry, and what the client must read from them. */
  serverTiming?: ServerTimingKeys;
}

/**
 * Where one SGLang generation puts its timing keys in a stream with `--enable-metrics` (test/fixtures/streams/README.md
 * names the source and commit of each set), and the outcome fields they must fill.
 */
export interface ServerTimingKeys {
  generation: '2025' | '2026';
  /** On every event (the 2026 scheduler's keys once the request was scheduled). */
  everyEvent: Record<string, unknown>;
  /** Only on the first streamed event (`response_sent_to_client_ts`, stamped when it was sent). */
  firstEvent: Record<string, unknown>;
  /** On the final event. */
  finalEvent: Record<string, unknown>;
  /** Outcome fields the keys fill on a streamed request. */
  expected: Partial<ClientOutcome>;
}

export const PROMPT_TOKENS = 8;

/** An SGLang `/generate` wire; with `timing`, its events carry one generation's timing keys. */
function sglangWireWith(timing?: ServerTimingKeys): ProtocolWire {
  const retractionKey = timing?.generation === '2025' ? 'total_retractions' : 'num_retractions';
  return {
    protocol: 'sglang',
    path: '/generate',
    tokenEvent(totalTokens, options = {}) {
      const final = options.finish !== undefined;
      return JSON.stringify({
        text: ' word'.repeat(totalTokens),
        output_ids: Array.from({ length: totalTokens }, (_, index) => 1000 + index),
        meta_info: {
          id: 'rid-under-test',
          finish_reason: final ? { type: options.finish, length: totalTokens } : null,
          prompt_tokens: PROMPT_TOKENS,
          weight_version: 'default',
          [retractionKey]: 0,
          ...timing?.everyEvent,
          completion_tokens: totalTokens,
          cached_tokens: 0,
          ...(final ? timing?.finalEvent : {}),
          ...(totalTokens === 1 ? timing?.firstEvent : {}),
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
          ...timing?.everyEvent,
          completion_tokens: totalTokens,
          cached_tokens: 2,
          e2e_latency: 0.1,
          ...timing?.finalEvent,
        },
      });
    },
    countsTokensWithoutUsage: true,
    ...(timing === undefined ? {} : { serverTiming: timing }),
  };
}

/** A server without `--enable-metrics`: no timing keys at all. */
export const sglangWire: ProtocolWire = sglangWireWith();

/**
 * SGLang 2026 (`observability/req_time_stats.py` at sgl-project/sglang 00ce49e0, `tokenizer_manager.py` at 001067ff):
 * the scheduler's keys on every event, `response_sent_to_client_ts` on the first event and repeated on the final one
 * with the API server's keys.
 */
export const sglang2026Wire: ProtocolWire = sglangWireWith({
  generation: '2026',
  everyEvent: {
    forward_entry_time: 1_763_712_000.25,
    prefill_finished_time: 1_763_712_000.3,
    queue_time: 0.05,
    prefill_waiting_latency: 0.0004,
    prefill_launch_latency: 0.0012,
  },
  firstEvent: { response_sent_to_client_ts: 1_763_712_000.3005 },
  finalEvent: {
    e2e_latency: 0.4,
    request_received_ts: 1_763_712_000.1,
    api_server_dispatch_finish_ts: 1_763_712_000.12,
    response_sent_to_client_ts: 1_763_712_000.3005,
    request_finished_ts: 1_763_712_000.5,
    inference_time: 0.25,
    decode_throughput: 15,
  },
  expected: {
    serverCreatedTime: 1_763_712_000.1,
    serverDispatchTime: 1_763_712_000.12,
    queueTimeStart: 1_763_712_000.2,
    queueTimeEnd: 1_763_712_000.25,
    serverFirstTokenTime: 1_763_712_000.3,
    serverResponseSentTime: 1_763_712_000.3005,
    serverFinishTime: 1_763_712_000.5,
    prefillWaitingLatency: 0.0004,
    prefillLaunchLatency: 0.0012,
    decodeThroughputTokensPerSecond: 15,
  },
});

/**
 * SGLang 2025 (`TokenizerManager._calculate_timing_metrics`, sgl-project/sglang PR #12646 and #14860): tokenizer-side
 * keys on the final event only, `response_sent_to_client_ts` also on the first; no scheduler keys.
 */
export const sglang2025Wire: ProtocolWire = sglangWireWith({
  generation: '2025',
  everyEvent: {},
  firstEvent: { response_sent_to_client_ts: 1_752_300_000.1405 },
  finalEvent: {
    e2e_latency: 0.3,
    request_received_ts: 1_752_300_000.1,
    request_sent_to_scheduler_ts: 1_752_300_000.11,
    prefill_finished_ts: 1_752_300_000.14,
    response_sent_to_client_ts: 1_752_300_000.1405,
    decode_finished_ts: 1_752_300_000.4,
    inference_time: 0.28,
    decode_throughput: 12,
  },
  expected: {
    serverCreatedTime: 1_752_300_000.1,
    serverDispatchTime: 1_752_300_000.11,
    queueTimeStart: undefined,
    queueTimeEnd: undefined,
    serverFirstTokenTime: 1_752_300_000.14,
    serverResponseSentTime: 1_752_300_000.1405,
    serverFinishTime: 1_752_300_000.4,
    prefillWaitingLatency: undefined,
    decodeThroughputTokensPerSecond: 12,
  },
});

function openAiUsage(promptTokens: number, totalTokens: number): Record<string, unknown> {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: totalTokens,
    total_tokens: promptTokens + totalTokens,
    prompt_tokens_details: { cached_tokens: 2 },
  };
}

/** A body or stream event as SGLang's OpenAI-compatible server writes one: an id and object kind, then choices and usage. */
function openAiBody(id: string, object: string, choices: unknown[], usage: Record<string, unknown> | null): string {
  return JSON.stringify({ id, object, created: 1_760_000_000, model: 'test-model', choices, usage });
}

export const openAiCompletionsWire: ProtocolWire = {
  protocol: 'openai-completions',
  path: '/v1/completions',
  tokenEvent(totalTokens, options = {}) {
    return openAiBody(
      'cmpl-under-test',
      'text_completion',
      [{ index: 0, text: ' word', logprobs: null, finish_reason: options.finish ?? null, matched_stop: null }],
      options.withUsage === true ? openAiUsage(PROMPT_TOKENS, totalTokens) : null,
    );
  },
  trailingEvents: (promptTokens, totalTokens) => [openAiBody('cmpl-under-test', 'text_completion', [], openAiUsage(promptTokens, totalTokens))],
  errorEvent: (message) => JSON.stringify({ error: { message, type: 'InternalServerError', code: 500 } }),
  wholeBody(promptTokens, totalTokens, finish) {
    return openAiBody(
      'cmpl-under-test',
      'text_completion',
      [{ index: 0, text: ' word'.repeat(totalTokens), logprobs: null, finish_reason: finish }],
      openAiUsage(promptTokens, totalTokens),
    );
  },
  countsTokensWithoutUsage: false,
};

export const openAiChatWire: ProtocolWire = {
  protocol: 'openai-chat',
  path: '/v1/chat/completions',
  tokenEvent(totalTokens, options = {}) {
    return openAiBody(
      'chatcmpl-under-test',
      'chat.completion.chunk',
      [
        {
          index: 0,
          delta: { role: null, content: ' word', reasoning_content: null, tool_calls: null },
          logprobs: null,
          finish_reason: options.finish ?? null,
          matched_stop: null,
        },
      ],
      options.withUsage === true ? openAiUsage(PROMPT_TOKENS, totalTokens) : null,
    );
  },
  trailingEvents: (promptTokens, totalTokens) => [openAiBody('chatcmpl-under-test', 'chat.completion.chunk', [], openAiUsage(promptTokens, totalTokens))],
  errorEvent: (message) => JSON.stringify({ object: 'error', message, type: 'BadRequestError', param: null, code: 400 }),
  wholeBody(promptTokens, totalTokens, finish) {
    return openAiBody(
      'chatcmpl-under-test',
      'chat.completion',
      [
        {
          index: 0,
          message: { role: 'assistant', content: ' word'.repeat(totalTokens), reasoning_content: null, tool_calls: null },
          logprobs: null,
          finish_reason: finish,
          matched_stop: null,
        },
      ],
      openAiUsage(promptTokens, totalTokens),
    );
  },
  countsTokensWithoutUsage: false,
};
