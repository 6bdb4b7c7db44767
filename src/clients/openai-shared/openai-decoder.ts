import type { Clock } from '../../clock/clock.js';
import type { ClientOutcome } from '../../types/record.js';
import type { Milliseconds } from '../../types/time.js';
import type { DecodeFailure, ResponseDecoder } from '../common/response-decoder.js';
import { capServerText, errorMessageOf, malformed, MAX_FINISH_REASON_CHARS, readNumber, serverError } from '../common/response-decoder.js';
import { fillClientTiming, TokenTimeline } from '../common/token-timeline.js';

type JsonObject = Record<string, unknown>;

/** Whether one streamed choice carries generated content (the two OpenAI endpoints put it in different places). */
export type ChoiceContentTest = (choice: JsonObject) => boolean;

/**
 * Reads OpenAI-compatible `/v1/completions` and `/v1/chat/completions` answers.
 *
 * Streaming: `data: {json}` chunks and `data: [DONE]`. The client asks for `stream_options.continuous_usage_stats`,
 * so SGLang (and vLLM) put the cumulative usage on every chunk: the tokens a chunk added are the change in
 * `usage.completion_tokens`, and its gap is spread over them (SGLang merges queued outputs, so one chunk can carry
 * several tokens, and a chat chunk is only sent once the detokenizer has text to show). A chunk without usage counts
 * as one token when it has content. The usage-only chunk that `stream_options.include_usage` adds at the end (empty
 * `choices`) gives the prompt, output and cached token counts; cached tokens
 * (`usage.prompt_tokens_details.cached_tokens`) are read wherever a usage reports them, which SGLang does only with
 * `--enable-cache-report`. There are no server timing keys on these endpoints (see the server request log instead).
 * An error chunk (`{"error": {message, code}}`) is `server_error`, with its code as `serverStatusCode`.
 */
export class OpenAiDecoder implements ResponseDecoder {
  complete = false;
  readonly #timeline: TokenTimeline;
  readonly #stream: boolean;
  readonly #hasContent: ChoiceContentTest;
  /** Output tokens counted so far, from usage or one per content chunk without usage. */
  #countedTokens = 0;
  #finishMs: Milliseconds | undefined = undefined;
  #finishReason: string | undefined = undefined;
  #promptTokens: number | undefined = undefined;
  #outputTokens: number | undefined = undefined;
  #cachedTokens: number | undefined = undefined;
  #statusCode: number | undefined = undefined;

  /** `maxTokens`: the request's `max_tokens`; a count beyond it is `malformed_stream`. */
  constructor(stream: boolean, hasStreamedContent: ChoiceContentTest, maxTokens?: number) {
    this.#stream = stream;
    this.#timeline = new TokenTimeline(maxTokens);
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
    if (errorMessage !== undefined) {
      this.#statusCode = statusCodeOf(chunk);
      return serverError(errorMessage);
    }
    const usage = chunk['usage'];
    const choices = chunk['choices'];
    if (Array.isArray(choices) && choices.length > 0) {
      const choice = choices[0] as JsonObject;
      if (typeof choice !== 'object' || choice === null) return malformed(`a choice is not an object: ${data}`);
      const usageTokens = typeof usage === 'object' && usage !== null ? readNumber((usage as JsonObject)['completion_tokens']) : undefined;
      // With per-chunk usage, any chunk whose count grew carried tokens (text held back by a stop-string or
      // detokenizer boundary arrives with a later chunk, which then carries several); without it, a content chunk is one.
      // A count past the request's limit fails the request; one that went backwards adds nothing (TokenTimeline.add).
      const added = usageTokens !== undefined ? usageTokens - this.#countedTokens : this.#hasContent(choice) ? 1 : 0;
      if (added !== 0) {
        const failure = this.#timeline.add(added, nowMs);
        if (failure !== undefined) return failure;
        if (added > 0) this.#countedTokens += added;
      }
      const finishReason = choice['finish_reason'];
      if (finishReason !== undefined && finishReason !== null && this.#finishMs === undefined) {
        this.#finishMs = nowMs;
        this.#finishReason = capServerText(String(finishReason), MAX_FINISH_REASON_CHARS);
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
    if (errorMessage !== undefined) {
      this.#statusCode = statusCodeOf(body);
      return serverError(errorMessage);
    }
    const choices = body['choices'];
    if (!Array.isArray(choices) || choices.length === 0) return malformed('an answer without choices');
    const choice = choices[0] as JsonObject;
    if (typeof choice !== 'object' || choice === null) return malformed('an answer whose first choice is not an object');
    const finishReason = choice['finish_reason'];
    if (finishReason !== undefined && finishReason !== null) this.#finishReason = capServerText(String(finishReason), MAX_FINISH_REASON_CHARS);
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
    if (outputTokens !== undefined && timeline.backwardSteps === 0) outcome.actualOutputTokens = outputTokens;
    if (this.#cachedTokens !== undefined) outcome.cachedTokens = this.#cachedTokens;
    if (this.#finishReason !== undefined) outcome.finishReason = this.#finishReason;
    if (this.#statusCode !== undefined) outcome.serverStatusCode = this.#statusCode;
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

/** The numeric `code` of an error object (`{"error": {code}}` or `{"object": "error", code}`), if it has one. */
function statusCodeOf(value: JsonObject): number | undefined {
  const error = value['error'];
  if (typeof error === 'object' && error !== null) return readNumber((error as JsonObject)['code']);
  return readNumber(value['code']);
}

export function nonEmptyString(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0;
}
