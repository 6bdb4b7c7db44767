import type { ServerResponse } from 'node:http';
import type { Clock } from '../../clock/clock.js';
import type { EngineRequestView } from '../../types/engine.js';
import type { Milliseconds } from '../../types/time.js';
import { OUTPUT_WORDS, outputWordIndex } from '../core/output-tokens.js';
import { PD_PHASES_META_KEY } from '../disaggregation/pd-phases.js';
import type { SglangMetrics } from '../metrics/sglang-metrics.js';
import { endEventStream, sendJson, startEventStream, writeEvent } from './http-helpers.js';

export type ServedProtocol = 'generate' | 'completions' | 'chat' | 'health';

export interface ServedRequestContext {
  clock: Clock;
  metrics: SglangMetrics;
  seed: number;
  servedModelName: string;
  /** `--enable-cache-report`: OpenAI usage carries `prompt_tokens_details.cached_tokens` only then (off by default). */
  enableCacheReport: boolean;
  /** Called once the request is finished and its answer written, so the server can forget it. */
  onDone(id: string): void;
}

/** What an OpenAI stream asked for in `stream_options`. */
export interface StreamUsageOptions {
  /** `include_usage`: a last chunk with the request's usage and no choices. */
  includeUsage: boolean;
  /** `continuous_usage_stats`: usage so far on every chunk. */
  continuousUsage: boolean;
}

/**
 * One HTTP request being served: it turns the engine's token and finish events into the protocol's answer, writing an
 * SSE event per token for streams (tokens arrive at step boundaries, so the event gaps are the engine's step times).
 */
export class ServedRequest {
  readonly id: string;
  readonly protocol: ServedProtocol;
  readonly stream: boolean;
  readonly usageOptions: StreamUsageOptions;
  readonly response: ServerResponse | null;
  readonly #context: ServedRequestContext;
  readonly #createdEpochSeconds: number;
  readonly #onHealthDone: (() => void) | null;
  #text = '';
  #outputIds: number[] = [];
  #firstTokenMs: Milliseconds = Number.NaN;
  /** When the first streamed event went out (epoch seconds): SGLang's response_sent_to_client_ts. */
  #responseSentEpochSeconds = Number.NaN;
  #lastTokenMs: Milliseconds = Number.NaN;
  #clientGone = false;
  #done = false;
  /**
   * A PD decode server's phases for this request (pd-phases.ts, in seconds), reported on the /generate answer's
   * meta_info under PD_PHASES_META_KEY from the first token on; undefined elsewhere.
   */
  pdPhases: Record<string, number> | undefined = undefined;

  constructor(
    id: string,
    protocol: ServedProtocol,
    stream: boolean,
    usageOptions: StreamUsageOptions,
    response: ServerResponse | null,
    context: ServedRequestContext,
    onHealthDone: (() => void) | null = null,
  ) {
    this.id = id;
    this.protocol = protocol;
    this.stream = stream;
    this.usageOptions = usageOptions;
    this.response = response;
    this.#context = context;
    this.#createdEpochSeconds = Math.floor(context.clock.nowEpochSeconds());
    this.#onHealthDone = onHealthDone;
  }

  get done(): boolean {
    return this.#done;
  }

  /** The client went away: nothing more is written (the server aborts the request in the engine). */
  markClientGone(): void {
    this.#clientGone = true;
  }

  startStream(): void {
    if (this.stream && this.response !== null) {
      startEventStream(this.response);
      if (this.protocol === 'chat') {
        writeEvent(this.response, this.#chatChunk({ role: 'assistant', content: '' }, null, null));
      }
    }
  }

  onToken(view: EngineRequestView, timeMs: Milliseconds): void {
    const index = view.outputTokens - 1;
    const word = OUTPUT_WORDS[outputWordIndex(this.#context.seed, view.serial, index)] as string;
    const piece = index === 0 ? word : ` ${word}`;
    this.#text += piece;
    this.#outputIds.push(view.outputTokenId(index));
    const metrics = this.#context.metrics;
    if (Number.isNaN(this.#firstTokenMs)) {
      this.#firstTokenMs = timeMs;
      metrics.observeFirstToken((timeMs - view.receivedMs) / 1000);
      metrics.observeQueueTime((view.forwardEntryMs - view.queueEntryMs) / 1000);
    } else {
      metrics.observeInterToken((timeMs - this.#lastTokenMs) / 1000);
    }
    this.#lastTokenMs = timeMs;
    // The last token's event is written by onFinish (it carries finish_reason and the final timing keys).
    if (view.outputTokens >= view.maxNewTokens) return;
    if (!this.stream || this.response === null || this.#clientGone) return;
    if (this.protocol === 'generate') {
      writeEvent(this.response, this.#generateBody(view, false));
    } else if (this.protocol === 'completions') {
      writeEvent(this.response, this.#completionChunk(piece, null, view));
    } else if (this.protocol === 'chat') {
      writeEvent(this.response, this.#chatChunk({ content: piece }, null, view));
    }
  }

  onFinish(view: EngineRequestView, timeMs: Milliseconds): void {
    if (this.#done) return;
    this.#done = true;
    const reason = view.finishReason;
    const aborted = reason !== null && reason.type === 'abort';
    this.#context.metrics.observeFinished(
      (timeMs - view.receivedMs) / 1000,
      view.promptLength,
      view.outputTokens,
      view.cachedTokens,
      aborted,
    );
    this.#context.onDone(this.id);
    if (this.protocol === 'health') {
      this.#onHealthDone?.();
      return;
    }
    const response = this.response;
    if (response === null || this.#clientGone) return;
    const rejected = reason !== null && reason.type === 'abort' && reason.status_code !== undefined;
    if (rejected) {
      const message = reason.message;
      const statusCode = reason.status_code ?? 400;
      const openAiError = { object: 'error', message, type: reason.err_type ?? 'BadRequestError', param: null, code: statusCode };
      if (!this.stream) {
        // Not streamed: an HTTP error, `{"error": {"message"}}` on /generate, OpenAI's flat ErrorResponse otherwise.
        sendJson(response, statusCode, this.protocol === 'generate' ? { error: { message } } : openAiError);
      } else if (this.protocol === 'generate') {
        // Streamed /generate: the last event carries finish_reason {type: "abort", message, status_code}.
        writeEvent(response, this.#generateBody(view, true));
        endEventStream(response);
      } else {
        // Streamed OpenAI: the error event wraps the ErrorResponse, {"error": {...}} (create_streaming_error_response).
        writeEvent(response, { error: openAiError });
        endEventStream(response);
      }
      return;
    }
    const lastPiece = this.#lastPiece(view);
    if (this.protocol === 'generate') {
      if (this.stream) {
        writeEvent(response, this.#generateBody(view, true));
        endEventStream(response);
      } else {
        sendJson(response, 200, this.#generateBody(view, true));
      }
      return;
    }
    const finishReason = reason === null ? null : reason.type;
    if (this.protocol === 'completions') {
      if (this.stream) {
        writeEvent(response, this.#completionChunk(lastPiece, finishReason, view));
        if (this.usageOptions.includeUsage) writeEvent(response, this.#usageChunk('text_completion', view));
        endEventStream(response);
      } else {
        sendJson(response, 200, {
          id: this.id,
          object: 'text_completion',
          created: this.#createdEpochSeconds,
          model: this.#context.servedModelName,
          choices: [{ index: 0, text: this.#text, logprobs: null, finish_reason: finishReason, matched_stop: null }],
          usage: this.#usage(view),
        });
      }
      return;
    }
    if (this.stream) {
      writeEvent(response, this.#chatChunk(lastPiece === '' ? {} : { content: lastPiece }, finishReason, view));
      if (this.usageOptions.includeUsage) writeEvent(response, this.#usageChunk('chat.completion.chunk', view));
      endEventStream(response);
    } else {
      sendJson(response, 200, {
        id: this.id,
        object: 'chat.completion',
        created: this.#createdEpochSeconds,
        model: this.#context.servedModelName,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: this.#text, reasoning_content: null, tool_calls: null },
            logprobs: null,
            finish_reason: finishReason,
            matched_stop: null,
          },
        ],
        usage: this.#usage(view),
      });
    }
  }

  /**
   * The request never reached the engine: its KV could not be had (SGLang answers a failed transfer with a 500,
   * TransferFailed: decode.py). A stream gets an error event, an answer not streamed a 500.
   */
  failTransfer(message: string): void {
    if (this.#done) return;
    this.#done = true;
    this.#context.onDone(this.id);
    const response = this.response;
    if (response === null || this.#clientGone) return;
    const body = this.protocol === 'generate' ? { error: { message } } : { object: 'error', message, type: 'InternalServerError', param: null, code: 500 };
    if (!this.stream) {
      sendJson(response, 500, body);
      return;
    }
    writeEvent(response, this.protocol === 'generate' ? { text: this.#text, meta_info: { id: this.id, finish_reason: { type: 'abort', message, status_code: 500 } } } : { error: body });
    endEventStream(response);
  }

  /** The text the last token added (empty when the request finished without a new token, e.g. an abort). */
  #lastPiece(view: EngineRequestView): string {
    if (view.outputTokens === 0 || this.#lastTokenMs !== view.finishedMs) return '';
    const index = view.outputTokens - 1;
    const word = OUTPUT_WORDS[outputWordIndex(this.#context.seed, view.serial, index)] as string;
    return index === 0 ? word : ` ${word}`;
  }

  /**
   * `/generate` output. meta_info keys and their order follow SGLang's tokenizer manager: id, finish_reason,
   * prompt_tokens, weight_version, num_retractions, the scheduler's timing keys (every event, with --enable-metrics),
   * reasoning_tokens, completion_tokens, cached_tokens (+ cached_tokens_details, dp_rank); on the last event
   * e2e_latency and the API server's timing keys (request_received_ts, api_server_dispatch_finish_ts,
   * request_finished_ts, inference_time, decode_throughput, response_sent_to_client_ts). In the simulator the request
   * enters the scheduler's queue the moment it is dispatched, so api_server_dispatch_finish_ts is the queue entry.
   *
   * response_sent_to_client_ts is stamped once, when the first streamed event is written (the final event of a stream
   * repeats that time, as SGLang's API-server stats do with metrics on); a non-streamed answer stamps it when written.
   * prefill_waiting_latency (batch launch minus forward entry) and prefill_launch_latency (the prefill batch's run)
   * are null until the prefill finishes; the simulator launches a batch the instant it forms it, so the waiting
   * latency is 0 and the launch latency spans the request's prefill (all its chunks).
   */
  #generateBody(view: EngineRequestView, final: boolean): Record<string, unknown> {
    const clock = this.#context.clock;
    const epoch = (ms: Milliseconds): number => clock.toEpochSeconds(ms);
    const meta: Record<string, unknown> = {
      id: view.id,
      finish_reason: final ? view.finishReason : null,
      prompt_tokens: view.promptLength,
      weight_version: 'default',
      num_retractions: view.numRetractions,
    };
    if (!Number.isNaN(view.forwardEntryMs)) meta['forward_entry_time'] = epoch(view.forwardEntryMs);
    if (!Number.isNaN(view.prefillFinishedMs)) meta['prefill_finished_time'] = epoch(view.prefillFinishedMs);
    meta['queue_time'] = Number.isNaN(view.forwardEntryMs) ? 0 : (view.forwardEntryMs - view.queueEntryMs) / 1000;
    const prefilled = !Number.isNaN(view.prefillFinishedMs) && !Number.isNaN(view.forwardEntryMs);
    meta['prefill_waiting_latency'] = prefilled ? 0 : null;
    meta['prefill_launch_latency'] = prefilled ? (view.prefillFinishedMs - view.forwardEntryMs) / 1000 : null;
    meta['reasoning_tokens'] = 0;
    meta['completion_tokens'] = view.outputTokens;
    meta['cached_tokens'] = view.cachedTokens;
    meta['cached_tokens_details'] = null;
    meta['dp_rank'] = null;
    if (this.pdPhases !== undefined) meta[PD_PHASES_META_KEY] = this.pdPhases;
    if (final) {
      const finishedMs = view.finishedMs;
      meta['e2e_latency'] = (finishedMs - view.receivedMs) / 1000;
      meta['request_received_ts'] = epoch(view.receivedMs);
      meta['api_server_dispatch_finish_ts'] = epoch(view.queueEntryMs);
      meta['request_finished_ts'] = epoch(finishedMs);
      if (!Number.isNaN(view.forwardEntryMs)) meta['inference_time'] = (finishedMs - view.forwardEntryMs) / 1000;
      const decodeSeconds = (finishedMs - this.#firstTokenMs) / 1000;
      if (decodeSeconds > 0 && view.outputTokens > 0) meta['decode_throughput'] = view.outputTokens / decodeSeconds;
    }
    if (final || Number.isNaN(this.#responseSentEpochSeconds)) {
      if (Number.isNaN(this.#responseSentEpochSeconds)) this.#responseSentEpochSeconds = clock.nowEpochSeconds();
      meta['response_sent_to_client_ts'] = this.#responseSentEpochSeconds;
    }
    // Serialized at once by the caller, so the live array can be handed over without a copy.
    return { text: this.#text, output_ids: this.#outputIds, meta_info: meta };
  }

  /** Per-chunk usage with `continuous_usage_stats` (tokens so far), else null. */
  #chunkUsage(view: EngineRequestView): Record<string, unknown> | null {
    if (!this.usageOptions.continuousUsage) return null;
    return { prompt_tokens: view.promptLength, total_tokens: view.promptLength + view.outputTokens, completion_tokens: view.outputTokens };
  }

  #usage(view: EngineRequestView): Record<string, unknown> {
    return {
      prompt_tokens: view.promptLength,
      total_tokens: view.promptLength + view.outputTokens,
      completion_tokens: view.outputTokens,
      prompt_tokens_details: this.#context.enableCacheReport ? { cached_tokens: view.cachedTokens } : null,
      reasoning_tokens: 0,
    };
  }

  #completionChunk(text: string, finishReason: string | null, view: EngineRequestView): Record<string, unknown> {
    return {
      id: this.id,
      object: 'text_completion',
      created: this.#createdEpochSeconds,
      model: this.#context.servedModelName,
      choices: [{ index: 0, text, logprobs: null, finish_reason: finishReason, matched_stop: null }],
      usage: this.#chunkUsage(view),
    };
  }

  #chatChunk(delta: Record<string, unknown>, finishReason: string | null, view: EngineRequestView | null): Record<string, unknown> {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.#createdEpochSeconds,
      model: this.#context.servedModelName,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason, matched_stop: null }],
      usage: view === null ? null : this.#chunkUsage(view),
    };
  }

  #usageChunk(object: string, view: EngineRequestView): Record<string, unknown> {
    return {
      id: this.id,
      object,
      created: this.#createdEpochSeconds,
      model: this.#context.servedModelName,
      choices: [],
      usage: this.#usage(view),
    };
  }
}
