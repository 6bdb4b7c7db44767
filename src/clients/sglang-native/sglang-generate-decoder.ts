import type { Clock } from '../../clock/clock.js';
import type { ClientOutcome } from '../../types/record.js';
import type { Milliseconds } from '../../types/time.js';
import type { DecodeFailure, ResponseDecoder } from '../common/response-decoder.js';
import { capServerText, errorMessageOf, malformed, MAX_FINISH_REASON_CHARS, readNumber, serverError } from '../common/response-decoder.js';
import { fillClientTiming, TokenTimeline } from '../common/token-timeline.js';
import { findMetaInfo, scanMidStreamCompletionTokens } from './sglang-event-scan.js';
import { SglangMetaInfo } from './sglang-meta-info.js';
import type { KeyPositions } from './sglang-event-scan.js';

type JsonObject = Record<string, unknown>;

/**
 * Reads SGLang `/generate` answers: an SSE stream of `{text, output_ids, meta_info}` events ending with `[DONE]`, or
 * one such object for a non-streaming request.
 *
 * Tokens: one event may add several tokens (SGLang merges queued outputs), so the count is the change in
 * `meta_info.completion_tokens` (cumulative). Events between the first token-carrying one and the final one are
 * scanned for that count instead of parsed, unless a scheduler timing key is still missing.
 *
 * Server timing keys are read by presence, both generations (2025 and 2026 key sets), by `SglangMetaInfo`; see
 * docs/protocols.md for the table of keys and columns.
 *
 * A final event whose `finish_reason.type` is `abort` (the scheduler rejected or aborted the request) is a failed
 * request: `server_error`, with the reason's `message` and its `status_code` as `serverStatusCode`.
 */
export class SglangGenerateDecoder implements ResponseDecoder {
  complete = false;
  readonly #timeline: TokenTimeline;
  readonly #stream: boolean;
  readonly #meta = new SglangMetaInfo();
  #completionTokens: number | undefined = undefined;
  #finishMs: Milliseconds | undefined = undefined;
  #finishReason: string | undefined = undefined;
  #statusCode: number | undefined = undefined;
  /** The previous event's length minus the position of its `meta_info` key (the hint of `findMetaInfo`). */
  #metaInfoTailChars: number | undefined = undefined;
  /** Where the scanned keys were in the previous event, relative to its meta_info (see scanMidStreamCompletionTokens). */
  readonly #keyPositions: KeyPositions = { finishReason: -1, completionTokens: -1 };

  /** `maxTokens`: the request's `max_new_tokens`; a count beyond it is `malformed_stream`. */
  constructor(stream: boolean, maxTokens?: number) {
    this.#stream = stream;
    this.#timeline = new TokenTimeline(maxTokens);
  }

  onEvent(data: string, nowMs: Milliseconds): DecodeFailure | undefined {
    if (data === '[DONE]') {
      this.complete = true;
      return undefined;
    }
    // Mid-stream events only move the token count: read it without parsing the event (see sglang-event-scan.ts). Every
    // key read here lives in meta_info, so the searches start there, past the cumulative text.
    const metaInfoStart = findMetaInfo(data, this.#metaInfoTailChars);
    this.#metaInfoTailChars = metaInfoStart < 0 ? undefined : data.length - metaInfoStart;
    const searchFrom = Math.max(metaInfoStart, 0);
    if (this.#timeline.firstTokenMs !== undefined && this.#completionTokens !== undefined && !this.#awaitsTimingKey(data, searchFrom)) {
      const completionTokens = scanMidStreamCompletionTokens(data, searchFrom, this.#keyPositions);
      if (completionTokens >= 0) {
        const added = completionTokens - this.#completionTokens;
        // Counting goes on from the highest count seen: a count that went backwards adds nothing (TokenTimeline).
        this.#completionTokens = Math.max(completionTokens, this.#completionTokens);
        return this.#timeline.add(added, nowMs);
      }
    }
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch {
      return malformed(`an event is not JSON: ${data}`);
    }
    return this.#read(event, nowMs, true);
  }

  onBody(text: string, nowMs: Milliseconds): DecodeFailure | undefined {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return malformed(`the answer is not JSON: ${text}`);
    }
    const failure = this.#read(body, nowMs, false);
    if (failure !== undefined) return failure;
    // A whole body is the final answer even if an old server left finish_reason out.
    if (this.#finishMs === undefined) this.#finishMs = nowMs;
    this.complete = true;
    return undefined;
  }

  fill(outcome: ClientOutcome, clock: Clock): void {
    const timeline = this.#timeline;
    fillClientTiming(outcome, clock, timeline, this.#stream, this.#finishMs);
    this.#meta.fill(outcome, this.#stream);
    const outputTokens = this.#completionTokens ?? (timeline.tokenCount > 0 ? timeline.tokenCount : undefined);
    if (outputTokens !== undefined && timeline.backwardSteps === 0) outcome.actualOutputTokens = outputTokens;
    if (this.#finishReason !== undefined) outcome.finishReason = this.#finishReason;
    if (this.#statusCode !== undefined) outcome.serverStatusCode = this.#statusCode;
  }

  /**
   * True when a scheduler timing key is still missing and this event may have one (`forward_entry_time`,
   * `queue_time`, `prefill_finished_time` all end in `_time"`, which escaped generated text cannot contain): then the
   * event is parsed in full. A server without `--enable-metrics` sends none of them, so its events are always scanned.
   */
  #awaitsTimingKey(data: string, searchFrom: number): boolean {
    if (!this.#meta.awaitsSchedulerKey) return false;
    return data.includes('_time":', searchFrom);
  }

  #read(value: unknown, nowMs: Milliseconds, streamed: boolean): DecodeFailure | undefined {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return malformed(`expected a JSON object, got: ${JSON.stringify(value)}`);
    }
    const event = value as JsonObject;
    if (event['error'] !== undefined) return serverError(errorMessageOf(event) ?? 'the server sent an error event');
    const metaValue = event['meta_info'];
    if (typeof metaValue !== 'object' || metaValue === null) return malformed('an answer without meta_info');
    const meta = metaValue as JsonObject;

    const completionTokens = readNumber(meta['completion_tokens']);
    let added: number;
    if (completionTokens !== undefined) {
      added = completionTokens - (this.#completionTokens ?? 0);
      this.#completionTokens = Math.max(completionTokens, this.#completionTokens ?? completionTokens);
    } else {
      added = 1; // no count at all: an event is one token, the best a server without the key allows
    }
    if (streamed && added !== 0) {
      const failure = this.#timeline.add(added, nowMs);
      if (failure !== undefined) return failure;
    }
    this.#meta.readAnyEvent(meta);

    const finishReason = meta['finish_reason'];
    if (finishReason === undefined || finishReason === null) return undefined;

    // The final event: everything the server reports once.
    if (this.#finishMs === undefined) this.#finishMs = nowMs;
    this.complete = true;
    this.#meta.readFinal(meta);
    let finishType: string | undefined;
    let finishMessage: string | undefined;
    if (typeof finishReason === 'string') finishType = finishReason;
    else if (typeof finishReason === 'object') {
      const reason = finishReason as JsonObject;
      if (typeof reason['type'] === 'string') finishType = reason['type'];
      if (typeof reason['message'] === 'string') finishMessage = reason['message'];
      this.#statusCode = readNumber(reason['status_code']);
    }
    this.#finishReason = finishType === undefined ? undefined : capServerText(finishType, MAX_FINISH_REASON_CHARS);
    if (finishType === 'abort') {
      const status = this.#statusCode === undefined ? '' : ` (status ${this.#statusCode})`;
      return serverError(`the server aborted the request${status}${finishMessage === undefined ? '' : `: ${finishMessage}`}`);
    }
    return undefined;
  }
}
