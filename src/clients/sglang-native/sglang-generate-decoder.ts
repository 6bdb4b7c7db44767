import type { Clock } from '../../clock/clock.js';
import type { ClientOutcome } from '../../types/record.js';
import type { EpochSeconds, Milliseconds } from '../../types/time.js';
import type { DecodeFailure, ResponseDecoder } from '../shared/response-decoder.js';
import { errorMessageOf, malformed, readNumber, serverError } from '../shared/response-decoder.js';
import { fillClientTiming, TokenTimeline } from '../shared/token-timeline.js';
import { findMetaInfo, scanMidStreamCompletionTokens } from './sglang-event-scan.js';
import type { KeyPositions } from './sglang-event-scan.js';

type JsonObject = Record<string, unknown>;

/**
 * Reads SGLang `/generate` answers: an SSE stream of `{text, output_ids, meta_info}` events ending with `[DONE]`, or
 * one such object for a non-streaming request.
 *
 * Tokens: one event may add several tokens, so the count is the change in `meta_info.completion_tokens` (cumulative).
 * Events between the first token-carrying one and the final one are scanned for that count instead of parsed.
 *
 * Server timing keys are read by presence, never required, because their names and the events that carry them moved
 * between SGLang versions (see docs/protocols.md):
 * - `request_received_ts` (final event) → serverCreatedTime;
 * - `forward_entry_time`, `queue_time` (every event once the request was scheduled, with `--enable-metrics`) →
 *   queueTimeEnd, and queueTimeStart = forward_entry_time − queue_time;
 * - serverFirstTokenTime: `prefill_finished_time` (scheduler, every event after prefill), else the older tokenizer-side
 *   `prefill_finished_ts` (final event of 2025 releases), else `response_sent_to_client_ts` when the first
 *   token-carrying event has it (SPEC §2; recent SGLang sets that key only on the final event).
 * - retractions: `num_retractions` (current) or `total_retractions` (older).
 */
export class SglangGenerateDecoder implements ResponseDecoder {
  complete = false;
  readonly #timeline = new TokenTimeline();
  readonly #stream: boolean;
  #completionTokens: number | undefined = undefined;
  #finishMs: Milliseconds | undefined = undefined;
  #finishReason: string | undefined = undefined;
  #promptTokens: number | undefined = undefined;
  #cachedTokens: number | undefined = undefined;
  #numRetractions: number | undefined = undefined;
  #requestReceivedTs: EpochSeconds | undefined = undefined;
  #forwardEntryTime: EpochSeconds | undefined = undefined;
  #queueTime: number | undefined = undefined;
  #prefillFinishedTime: EpochSeconds | undefined = undefined;
  #prefillFinishedTs: EpochSeconds | undefined = undefined;
  #firstChunkResponseSentTs: EpochSeconds | undefined = undefined;
  /** The previous event's length minus the position of its `meta_info` key (the hint of `findMetaInfo`). */
  #metaInfoTailChars: number | undefined = undefined;
  /** Where the scanned keys were in the previous event, relative to its meta_info (see scanMidStreamCompletionTokens). */
  readonly #keyPositions: KeyPositions = { finishReason: -1, completionTokens: -1 };

  constructor(stream: boolean) {
    this.#stream = stream;
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
        this.#completionTokens = completionTokens;
        if (added > 0) this.#timeline.add(added, nowMs);
        return undefined;
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
    if (this.#requestReceivedTs !== undefined) outcome.serverCreatedTime = this.#requestReceivedTs;
    if (this.#forwardEntryTime !== undefined) {
      outcome.queueTimeEnd = this.#forwardEntryTime;
      if (this.#queueTime !== undefined) outcome.queueTimeStart = queueStartOf(this.#forwardEntryTime, this.#queueTime, this.#requestReceivedTs);
    }
    const serverFirstToken = this.#prefillFinishedTime ?? this.#prefillFinishedTs ?? this.#firstChunkResponseSentTs;
    if (serverFirstToken !== undefined) outcome.serverFirstTokenTime = serverFirstToken;
    if (this.#promptTokens !== undefined) outcome.actualPromptTokens = this.#promptTokens;
    const outputTokens = this.#completionTokens ?? (timeline.tokenCount > 0 ? timeline.tokenCount : undefined);
    if (outputTokens !== undefined) outcome.actualOutputTokens = outputTokens;
    if (this.#cachedTokens !== undefined) outcome.cachedTokens = this.#cachedTokens;
    if (this.#numRetractions !== undefined) outcome.numRetractions = this.#numRetractions;
    if (this.#finishReason !== undefined) outcome.finishReason = this.#finishReason;
  }

  /**
   * True when a scheduler timing key is still missing and this event has one (`forward_entry_time`, `queue_time`,
   * `prefill_finished_time` all end in `_time"`, which escaped generated text cannot contain): parse it in full.
   */
  #awaitsTimingKey(data: string, searchFrom: number): boolean {
    if (this.#forwardEntryTime !== undefined && this.#queueTime !== undefined && this.#prefillFinishedTime !== undefined) {
      return false;
    }
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
      this.#completionTokens = completionTokens;
    } else {
      added = 1; // no count at all: an event is one token, the best a server without the key allows
    }
    if (streamed && added > 0) {
      if (this.#timeline.firstTokenMs === undefined) {
        this.#firstChunkResponseSentTs = readNumber(meta['response_sent_to_client_ts']);
      }
      this.#timeline.add(added, nowMs);
    }

    if (this.#forwardEntryTime === undefined) this.#forwardEntryTime = readNumber(meta['forward_entry_time']);
    if (this.#queueTime === undefined) this.#queueTime = readNumber(meta['queue_time']);
    if (this.#prefillFinishedTime === undefined) this.#prefillFinishedTime = readNumber(meta['prefill_finished_time']);

    const finishReason = meta['finish_reason'];
    if (finishReason === undefined || finishReason === null) return undefined;

    // The final event: everything the server reports once.
    if (this.#finishMs === undefined) this.#finishMs = nowMs;
    this.complete = true;
    this.#requestReceivedTs = readNumber(meta['request_received_ts']);
    this.#prefillFinishedTs = readNumber(meta['prefill_finished_ts']);
    this.#promptTokens = readNumber(meta['prompt_tokens']);
    this.#cachedTokens = readNumber(meta['cached_tokens']);
    this.#numRetractions = readNumber(meta['num_retractions']) ?? readNumber(meta['total_retractions']);
    let finishType: string | undefined;
    let finishMessage: string | undefined;
    if (typeof finishReason === 'string') finishType = finishReason;
    else if (typeof finishReason === 'object') {
      const type = (finishReason as JsonObject)['type'];
      const message = (finishReason as JsonObject)['message'];
      if (typeof type === 'string') finishType = type;
      if (typeof message === 'string') finishMessage = message;
    }
    this.#finishReason = finishType;
    if (finishType === 'abort') {
      return serverError(`the server aborted the request${finishMessage === undefined ? '' : `: ${finishMessage}`}`);
    }
    return undefined;
  }
}

/**
 * When the request entered the scheduler's queue: `forward_entry_time - queue_time`. Epoch seconds are doubles with a
 * resolution of about 0.24 µs today, so when the server queued the request the instant it received it, the
 * subtraction can land a fraction of a microsecond before `request_received_ts`, and the files (rounded to the
 * microsecond) showed the queue starting before the request arrived. Within a microsecond it is that instant.
 */
function queueStartOf(forwardEntryTime: EpochSeconds, queueTime: number, requestReceivedTs: EpochSeconds | undefined): EpochSeconds {
  const start = forwardEntryTime - queueTime;
  if (requestReceivedTs !== undefined && start < requestReceivedTs && requestReceivedTs - start < FLOAT_SLACK_SECONDS) return requestReceivedTs;
  return start;
}

/** The largest gap the subtraction above can open by rounding alone, with room to spare. */
const FLOAT_SLACK_SECONDS = 1e-6;
