import type { Clock } from '../../clock/clock.js';
import type { ClientOutcome } from '../../types/record.js';
import type { Milliseconds } from '../../types/time.js';
import type { DecodeFailure, ResponseDecoder } from '../shared/response-decoder.js';
import { errorMessageOf, malformed, readNumber, serverError } from '../shared/response-decoder.js';
import { fillClientTiming, TokenTimeline } from '../shared/token-timeline.js';

type JsonObject = Record<string, unknown>;

/** Whether one streamed choice carries generated content (the two OpenAI endpoints put it in different places). */
export type ChoiceContentTest = (choice: JsonObject) => boolean;

/**
 * Reads OpenAI-compatible `/v1/completions` and `/v1/chat/completions` answers.
 *
 * Streaming: `data: {json}` chunks and `data: [DONE]`. Tokens per chunk come from the usage when a chunk carries
 * one next to its choices (vLLM's continuous usage stats: the change in `usage.completion_tokens`); otherwise a chunk
 * with content counts as one token, which is exact for servers that send one token per chunk (SGLang does). The
 * usage-only chunk that `stream_options.include_usage` adds at the end (empty `choices`) gives the prompt, output and
 * cached token counts. There are no server timing keys on these endpoints.
 */
export class OpenAiDecoder implements ResponseDecoder {
  complete = false;
  readonly #timeline = new TokenTimeline();
  readonly #stream: boolean;
  readonly #hasContent: ChoiceContentTest;
  #usageCompletionTokens = 0;
  #finishMs: Milliseconds | undefined = undefined;
  #finishReason: string | undefined = undefined;
  #promptTokens: number | undefined = undefined;
  #outputTokens: number | undefined = undefined;
  #cachedTokens: number | undefined = undefined;

  constructor(stream: boolean, hasStreamedContent: ChoiceContentTest) {
    this.#stream = stream;
    this.#hasContent = hasStreamedContent;
  }

  onEvent(data: string, nowMs: Milliseconds): DecodeFailure | undefined {
    if (data === '[DONE]') {
      this.complete = true;
      return undefined;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return malformed(`a chunk is not JSON: ${data}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      return malformed(`expected a JSON object chunk, got: ${data}`);
    }
    const chunk = parsed as JsonObject;
    const errorMessage = errorMessageOf(chunk);
    if (errorMessage !== undefined) return serverError(errorMessage);
    const usage = chunk['usage'];
    const choices = chunk['choices'];
    if (Array.isArray(choices) && choices.length > 0) {
      const choice = choices[0] as JsonObject;
      if (typeof choice !== 'object' || choice === null) return malformed(`a choice is not an object: ${data}`);
      if (this.#hasContent(choice)) {
        let added = 1;
        if (typeof usage === 'object' && usage !== null) {
          const completionTokens = readNumber((usage as JsonObject)['completion_tokens']);
          if (completionTokens !== undefined) {
            added = completionTokens - this.#usageCompletionTokens;
            this.#usageCompletionTokens = completionTokens;
          }
        }
        if (added > 0) this.#timeline.add(added, nowMs);
      }
      const finishReason = choice['finish_reason'];
      if (finishReason !== undefined && finishReason !== null && this.#finishMs === undefined) {
        this.#finishMs = nowMs;
        this.#finishReason = String(finishReason);
        this.complete = true;
      }
    }
    if (typeof usage === 'object' && usage !== null) this.#readUsage(usage as JsonObject);
    return undefined;
  }

  onBody(text: string, nowMs: Milliseconds): DecodeFailure | undefined {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return malformed(`the answer is not JSON: ${text}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      return malformed(`expected a JSON object answer, got: ${text}`);
    }
    const body = parsed as JsonObject;
    const errorMessage = errorMessageOf(body);
    if (errorMessage !== undefined) return serverError(errorMessage);
    const choices = body['choices'];
    if (!Array.isArray(choices) || choices.length === 0) return malformed('an answer without choices');
    const choice = choices[0] as JsonObject;
    if (typeof choice !== 'object' || choice === null) return malformed('an answer whose first choice is not an object');
    const finishReason = choice['finish_reason'];
    if (finishReason !== undefined && finishReason !== null) this.#finishReason = String(finishReason);
    const usage = body['usage'];
    if (typeof usage === 'object' && usage !== null) this.#readUsage(usage as JsonObject);
    this.#finishMs = nowMs;
    this.complete = true;
    return undefined;
  }

  fill(outcome: ClientOutcome, clock: Clock): void {
    const timeline = this.#timeline;
    fillClientTiming(outcome, clock, timeline, this.#stream, this.#finishMs);
    if (this.#promptTokens !== undefined) outcome.actualPromptTokens = this.#promptTokens;
    const outputTokens = this.#outputTokens ?? (this.#stream && timeline.tokenCount > 0 ? timeline.tokenCount : undefined);
    if (outputTokens !== undefined) outcome.actualOutputTokens = outputTokens;
    if (this.#cachedTokens !== undefined) outcome.cachedTokens = this.#cachedTokens;
    if (this.#finishReason !== undefined) outcome.finishReason = this.#finishReason;
  }

  #readUsage(usage: JsonObject): void {
    const promptTokens = readNumber(usage['prompt_tokens']);
    if (promptTokens !== undefined) this.#promptTokens = promptTokens;
    const completionTokens = readNumber(usage['completion_tokens']);
    if (completionTokens !== undefined) this.#outputTokens = completionTokens;
    const details = usage['prompt_tokens_details'];
    if (typeof details === 'object' && details !== null) {
      const cached = readNumber((details as JsonObject)['cached_tokens']);
      if (cached !== undefined) this.#cachedTokens = cached;
    }
  }
}

export function nonEmptyString(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0;
}
