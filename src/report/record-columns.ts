import type { RequestRecord } from '../types/record.js';

/** `number`: a count (an integer where it can be); `float`: a measured quantity (always a double); `time`: epoch seconds. */
export type RecordColumnKind = 'time' | 'number' | 'float' | 'string' | 'boolean';

/** One stored field of a record under its SPEC §2 column name. */
export interface RecordColumn {
  column: string;
  field: keyof RequestRecord;
  kind: RecordColumnKind;
}

/** Timestamps, in lifecycle order (SPEC §2). Written as seconds after the run's t0. */
export const TIMESTAMP_COLUMNS: readonly RecordColumn[] = [
  { column: 'scheduled_time', field: 'scheduledTime', kind: 'time' },
  { column: 'arrival_time', field: 'arrivalTime', kind: 'time' },
  { column: 'router_send_time', field: 'routerSendTime', kind: 'time' },
  { column: 'server_created_time', field: 'serverCreatedTime', kind: 'time' },
  { column: 'queue_time_start', field: 'queueTimeStart', kind: 'time' },
  { column: 'queue_time_end', field: 'queueTimeEnd', kind: 'time' },
  { column: 'server_first_token_time', field: 'serverFirstTokenTime', kind: 'time' },
  { column: 'first_token_time', field: 'firstTokenTime', kind: 'time' },
  { column: 'finish_time', field: 'finishTime', kind: 'time' },
];

export const HOST_COLUMN: RecordColumn = { column: 'host', field: 'host', kind: 'string' };

/** Token columns; `decode_length` is derived (the actual output tokens when known) and handled by the writers. */
export const TOKEN_COLUMNS: readonly RecordColumn[] = [
  { column: 'input_length', field: 'inputLength', kind: 'number' },
  { column: 'expected_output_length', field: 'expectedOutputLength', kind: 'number' },
  { column: 'actual_prompt_tokens', field: 'actualPromptTokens', kind: 'number' },
  { column: 'actual_output_tokens', field: 'actualOutputTokens', kind: 'number' },
  { column: 'cached_tokens', field: 'cachedTokens', kind: 'number' },
];

export const WORKLOAD_COLUMNS: readonly RecordColumn[] = [
  { column: 'prefix_group', field: 'prefixGroup', kind: 'number' },
  { column: 'session_id', field: 'sessionId', kind: 'string' },
  { column: 'dataset_index', field: 'datasetIndex', kind: 'number' },
];

export const STATUS_COLUMNS: readonly RecordColumn[] = [
  { column: 'success', field: 'success', kind: 'boolean' },
  { column: 'error', field: 'error', kind: 'string' },
  { column: 'http_status', field: 'httpStatus', kind: 'number' },
  { column: 'num_retractions', field: 'numRetractions', kind: 'number' },
];

/** Fields beyond SPEC §2 that servelab also keeps, after the SPEC columns. */
export const EXTRA_COLUMNS: readonly RecordColumn[] = [
  { column: 'retries', field: 'retries', kind: 'number' },
  { column: 'finish_reason', field: 'finishReason', kind: 'string' },
  { column: 'error_message', field: 'errorMessage', kind: 'string' },
  // Under maxConcurrency: when the load generator handed the request to the client, and whether it waited for a slot.
  { column: 'dispatch_time', field: 'dispatchTime', kind: 'time' },
  { column: 'held_for_concurrency', field: 'heldForConcurrency', kind: 'boolean' },
  // SGLang's finer timing keys (read by presence from the stream or joined from the server's request log, see
  // docs/protocols.md). Times as above; latencies in seconds; throughput in output tokens per second.
  { column: 'server_dispatch_time', field: 'serverDispatchTime', kind: 'time' },
  { column: 'server_response_sent_time', field: 'serverResponseSentTime', kind: 'time' },
  { column: 'server_finish_time', field: 'serverFinishTime', kind: 'time' },
  { column: 'prefill_waiting_latency_s', field: 'prefillWaitingLatency', kind: 'float' },
  { column: 'prefill_launch_latency_s', field: 'prefillLaunchLatency', kind: 'float' },
  { column: 'decode_throughput_tok_s', field: 'decodeThroughputTokensPerSecond', kind: 'float' },
  { column: 'server_status_code', field: 'serverStatusCode', kind: 'number' },
  // What the server reported that could not be true and was left empty: `field:reason` entries joined by `;`.
  { column: 'data_quality', field: 'dataQuality', kind: 'string' },
];

/**
 * The first users' own columns (the framework servelab grew out of), beside servelab's: those of theirs that servelab
 * already writes under the same name (success, host, ttft, ...) are not repeated. `output_tokens_from_trace` is
 * stored; the others are computed from the record when a file is written.
 */
export const FIRST_USERS_STORED_COLUMNS: readonly RecordColumn[] = [
  { column: 'output_tokens_from_trace', field: 'outputTokensFromTrace', kind: 'number' },
];

/** A column computed from a record's stored fields (never stored itself, so requests.jsonl does not repeat it). */
export interface ComputedColumn {
  column: string;
  kind: 'number' | 'string' | 'boolean';
  compute(record: RequestRecord): number | string | boolean | undefined;
}

/** `req_id`: their name for `request_id`. */
export function reqId(record: RequestRecord): string {
  return record.requestId;
}

/** `has_generated_text`: the server sent at least one generated token (a counted output token, or a first token seen). */
export function hasGeneratedText(record: RequestRecord): boolean {
  if (record.actualOutputTokens !== undefined) return record.actualOutputTokens > 0;
  return record.firstTokenTime !== undefined;
}

/** `actual_total_tokens`: prompt plus output tokens as the server counted them; absent unless both are known. */
export function actualTotalTokens(record: RequestRecord): number | undefined {
  const { actualPromptTokens, actualOutputTokens } = record;
  return actualPromptTokens === undefined || actualOutputTokens === undefined ? undefined : actualPromptTokens + actualOutputTokens;
}

export const FIRST_USERS_COMPUTED_COLUMNS: readonly ComputedColumn[] = [
  { column: 'req_id', kind: 'string', compute: reqId },
  { column: 'has_generated_text', kind: 'boolean', compute: hasGeneratedText },
  { column: 'actual_total_tokens', kind: 'number', compute: actualTotalTokens },
];

/** Every stored scalar field of a record (everything but the ITL array and the warmup flag). */
export const RECORD_COLUMNS: readonly RecordColumn[] = [
  { column: 'request_id', field: 'requestId', kind: 'string' },
  ...TIMESTAMP_COLUMNS,
  HOST_COLUMN,
  ...TOKEN_COLUMNS,
  ...WORKLOAD_COLUMNS,
  ...STATUS_COLUMNS,
  ...EXTRA_COLUMNS,
  ...FIRST_USERS_STORED_COLUMNS,
];

/** The JSONL key of the per-token gaps (seconds). */
export const INTER_TOKEN_LATENCIES_KEY = 'inter_token_latencies';
