import type { ClientOutcome } from '../../types/record.js';
import type { EpochSeconds, Seconds } from '../../types/time.js';
import { readNumber } from '../common/response-decoder.js';

type JsonObject = Record<string, unknown>;

/**
 * The server timing and token keys of SGLang's `meta_info`, read by presence: every key is optional, and both
 * generations are understood (see docs/protocols.md, "SGLang server timing keys").
 *
 * - 2026 (`observability/req_time_stats.py`): the scheduler's `forward_entry_time`, `prefill_finished_time`,
 *   `queue_time`, `prefill_waiting_latency`, `prefill_launch_latency` on every event once scheduled; the API server's
 *   `request_received_ts`, `api_server_dispatch_finish_ts`, `response_sent_to_client_ts`, `request_finished_ts`,
 *   `decode_throughput` on the final event (all with `--enable-metrics`).
 * - 2025 (`TokenizerManager._calculate_timing_metrics`): `request_received_ts`, `request_sent_to_scheduler_ts`,
 *   `prefill_finished_ts`, `response_sent_to_client_ts`, `decode_finished_ts` on the final event.
 *
 * Absolute times are epoch seconds (SGLang converts `perf_counter` readings with a periodically recalibrated offset),
 * so they share the server's wall clock, not the client's.
 */
export class SglangMetaInfo {
  requestReceivedTs: EpochSeconds | undefined = undefined;
  dispatchFinishTs: EpochSeconds | undefined = undefined;
  forwardEntryTime: EpochSeconds | undefined = undefined;
  queueTime: Seconds | undefined = undefined;
  prefillFinishedTime: EpochSeconds | undefined = undefined;
  prefillFinishedTs: EpochSeconds | undefined = undefined;
  responseSentTs: EpochSeconds | undefined = undefined;
  finishedTs: EpochSeconds | undefined = undefined;
  prefillWaitingLatency: Seconds | undefined = undefined;
  prefillLaunchLatency: Seconds | undefined = undefined;
  decodeThroughput: number | undefined = undefined;
  promptTokens: number | undefined = undefined;
  cachedTokens: number | undefined = undefined;
  completionTokens: number | undefined = undefined;
  numRetractions: number | undefined = undefined;
  /** A simulated PD decode server's phases (meta_info.servelab_pd_phases, seconds); no real SGLang key. */
  pdPhases: JsonObject | undefined = undefined;

  /**
   * True while a scheduler key that arrives on mid-stream events has not been seen yet. The prefill latencies are
   * computed by the time `prefill_finished_time` is stamped and ride on the same event, so once that one is known they
   * are too, or they never come (they stay null where no prefill batch ran here, e.g. on a disaggregated decode
   * server): waiting for them would parse every event in full.
   */
  get awaitsSchedulerKey(): boolean {
    return this.forwardEntryTime === undefined || this.queueTime === undefined || this.prefillFinishedTime === undefined;
  }

  /**
   * Keys any event may carry. The first value seen is kept: the scheduler stamps each once (a retraction does not move
   * `forward_entry_time`), and `response_sent_to_client_ts` is stamped on the first streamed event and only repeated
   * on the final one. `prefill_*_latency` are null until the prefill batch ran, so a null is no value.
   */
  readAnyEvent(meta: JsonObject): void {
    this.forwardEntryTime ??= readNumber(meta['forward_entry_time']);
    this.queueTime ??= readNumber(meta['queue_time']);
    this.prefillFinishedTime ??= readNumber(meta['prefill_finished_time']);
    this.prefillWaitingLatency ??= readNumber(meta['prefill_waiting_latency']);
    this.prefillLaunchLatency ??= readNumber(meta['prefill_launch_latency']);
    this.responseSentTs ??= readNumber(meta['response_sent_to_client_ts']);
  }

  /** Keys of the final event (or of a request-log line, which is the final event's meta_info). */
  readFinal(meta: JsonObject): void {
    this.readAnyEvent(meta);
    this.requestReceivedTs = readNumber(meta['request_received_ts']) ?? this.requestReceivedTs;
    this.dispatchFinishTs = readNumber(meta['api_server_dispatch_finish_ts']) ?? readNumber(meta['request_sent_to_scheduler_ts']) ?? this.dispatchFinishTs;
    this.prefillFinishedTs = readNumber(meta['prefill_finished_ts']) ?? this.prefillFinishedTs;
    this.finishedTs = readNumber(meta['request_finished_ts']) ?? readNumber(meta['decode_finished_ts']) ?? this.finishedTs;
    this.decodeThroughput = readNumber(meta['decode_throughput']) ?? this.decodeThroughput;
    this.promptTokens = readNumber(meta['prompt_tokens']) ?? this.promptTokens;
    this.cachedTokens = readNumber(meta['cached_tokens']) ?? this.cachedTokens;
    this.completionTokens = readNumber(meta['completion_tokens']) ?? this.completionTokens;
    this.numRetractions = readNumber(meta['num_retractions']) ?? readNumber(meta['total_retractions']) ?? this.numRetractions;
    const phases = meta['servelab_pd_phases'];
    if (typeof phases === 'object' && phases !== null && !Array.isArray(phases)) this.pdPhases = phases as JsonObject;
  }

  /**
   * Copies the server's view into an outcome. `streamed` says whether `response_sent_to_client_ts` marks the first
   * event (a stream) or the whole answer (not streamed): only the first is a first-token fallback. With `onlyMissing`,
   * fields the outcome already has are kept (a request-log line fills what the stream did not carry).
   */
  fill(outcome: ClientOutcome, streamed: boolean, onlyMissing = false): void {
    const set = <K extends keyof ClientOutcome>(key: K, value: ClientOutcome[K] | undefined): void => {
      if (value === undefined) return;
      if (onlyMissing && outcome[key] !== undefined) return;
      outcome[key] = value;
    };
    set('serverCreatedTime', this.requestReceivedTs);
    set('serverDispatchTime', this.dispatchFinishTs);
    if (this.forwardEntryTime !== undefined) {
      set('queueTimeEnd', this.forwardEntryTime);
      if (this.queueTime !== undefined) set('queueTimeStart', queueStartOf(this.forwardEntryTime, this.queueTime, this.requestReceivedTs));
    }
    const firstChunkSent = streamed ? this.responseSentTs : undefined;
    set('serverFirstTokenTime', this.prefillFinishedTime ?? this.prefillFinishedTs ?? firstChunkSent);
    set('serverResponseSentTime', this.responseSentTs);
    set('serverFinishTime', this.finishedTs);
    set('prefillWaitingLatency', this.prefillWaitingLatency);
    set('prefillLaunchLatency', this.prefillLaunchLatency);
    set('decodeThroughputTokensPerSecond', this.decodeThroughput);
    set('actualPromptTokens', this.promptTokens);
    set('cachedTokens', this.cachedTokens);
    set('numRetractions', this.numRetractions);
    const phases = this.pdPhases;
    if (phases !== undefined) {
      set('prefillQueueTime', readNumber(phases['prefill_queue_time']));
      set('prefillForwardTime', readNumber(phases['prefill_forward_time']));
      set('kvTransferTime', readNumber(phases['kv_transfer_time']));
      set('kvTransferWaitTime', readNumber(phases['kv_transfer_wait_time']));
      set('decodeQueueTime', readNumber(phases['decode_queue_time']));
    }
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
