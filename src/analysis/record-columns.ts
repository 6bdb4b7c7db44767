import type { RequestRecord } from '../types/record.js';
import { DERIVED_COLUMNS } from './derive.js';

/**
 * The one table of a request's columns. Everything that writes or keeps a record follows it: the record store
 * (src/load/record-store.ts), requests.csv, requests.jsonl (and the run journal) and requests.parquet. Adding a
 * column is one entry here plus the field on RequestRecord (src/types/record.ts) and the code that sets it (a client,
 * the request-log join); docs/CONTRIBUTING.md, "Adding a record column".
 *
 * What each kind is and how each format renders it:
 * - `time`: an instant, epoch seconds in the record. CSV, JSONL and Parquet (DOUBLE) write seconds after the run's t0,
 *   rounded to the microsecond; the record store keeps the double.
 * - `float`: a measured quantity (a latency in seconds, a rate). CSV and JSONL write it as `String(value)` does,
 *   Parquet as DOUBLE; the record store keeps the double.
 * - `count`: an integer (tokens, a status code, an index). Written as `String(value)`; Parquet INT32, or DOUBLE when a
 *   value of the run is not a 32-bit integer; the record store keeps an int32 (anything else aside, exactly).
 * - `boolean`: `true` / `false`; Parquet BOOLEAN; two bits of the record store's flags.
 * - `string`: CSV quotes it where needed and neutralises a would-be formula; JSONL as JSON.stringify; Parquet STRING
 *   (an empty string is absent, as in CSV). The record store interns it when `repeats` (hosts, error classes: few
 *   distinct values), else keeps it aside per record (messages, ids).
 * An absent value is an empty CSV cell, a left-out JSONL key and a Parquet null.
 */
export type RecordColumnKind = 'time' | 'float' | 'count' | 'boolean' | 'string';

/** Where a column's values come from: who measures or sets the field. */
export type ColumnOrigin = 'workload' | 'load-generator' | 'client' | 'router' | 'server' | 'trace' | 'analysis';

interface ColumnBase {
  /** The name in requests.csv, requests.jsonl and requests.parquet. */
  column: string;
  kind: RecordColumnKind;
  /** The unit of its values, for the docs (`s after t0`, `s`, `tokens`, `tokens/s`, ''). */
  unit: string;
  origin: ColumnOrigin;
}

/** A field stored in the record: kept by the record store and written to every format. */
export interface StoredColumn extends ColumnBase {
  source: 'record';
  field: keyof RequestRecord;
  /** `string` only: few distinct values, stored once each in the record store. */
  repeats?: true;
}

/** Another name for a stored field, written to requests.csv and requests.parquet only (requests.jsonl has the field once). */
export interface AliasColumn extends ColumnBase {
  source: 'alias';
  field: keyof RequestRecord;
}

/** A duration computed from the record's instants by src/analysis/derive.ts (seconds); CSV and Parquet only. */
export interface DerivedColumn extends ColumnBase {
  source: 'derived';
}

/** A value computed from a record's stored fields when a file is written; CSV and Parquet only. */
export interface ComputedColumn extends ColumnBase {
  source: 'computed';
  kind: 'count' | 'string' | 'boolean';
  compute(record: RequestRecord): number | string | boolean | undefined;
}

export type RequestColumn = StoredColumn | AliasColumn | DerivedColumn | ComputedColumn;

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

/** `req_id`: the first users' name for `request_id`. */
function reqId(record: RequestRecord): string {
  return record.requestId;
}

// The helpers keep each field's literal name, for the check at the end of this file.
const time = <Field extends keyof RequestRecord>(column: string, field: Field, origin: ColumnOrigin): StoredColumn & { field: Field } => ({ column, field, kind: 'time', unit: 's after t0', origin, source: 'record' });
const count = <Field extends keyof RequestRecord>(column: string, field: Field, unit: string, origin: ColumnOrigin): StoredColumn & { field: Field } => ({ column, field, kind: 'count', unit, origin, source: 'record' });

/**
 * The table itself. Its order is the files' format (CSV columns, JSONL keys, Parquet schema): add a new column at the
 * end of its group, never reorder one that exists.
 */
const COLUMN_TABLE = [
  { column: 'request_id', field: 'requestId', kind: 'string', unit: '', origin: 'load-generator', source: 'record' },
  // Timestamps, in lifecycle order. The server's (created .. server first token) are on the server's clock.
  time('scheduled_time', 'scheduledTime', 'load-generator'),
  time('arrival_time', 'arrivalTime', 'client'),
  time('router_send_time', 'routerSendTime', 'router'),
  time('server_created_time', 'serverCreatedTime', 'server'),
  time('queue_time_start', 'queueTimeStart', 'server'),
  time('queue_time_end', 'queueTimeEnd', 'server'),
  time('server_first_token_time', 'serverFirstTokenTime', 'server'),
  time('first_token_time', 'firstTokenTime', 'client'),
  time('finish_time', 'finishTime', 'client'),
  { column: 'host', field: 'host', kind: 'string', unit: '', origin: 'router', source: 'record', repeats: true },
  ...DERIVED_COLUMNS.map((derived): DerivedColumn => ({ column: derived.name, kind: 'float', unit: 's', origin: 'analysis', source: 'derived' })),
  // Tokens.
  count('input_length', 'inputLength', 'tokens', 'workload'),
  count('expected_output_length', 'expectedOutputLength', 'tokens', 'workload'),
  count('actual_prompt_tokens', 'actualPromptTokens', 'tokens', 'server'),
  count('actual_output_tokens', 'actualOutputTokens', 'tokens', 'server'),
  count('cached_tokens', 'cachedTokens', 'tokens', 'server'),
  { column: 'decode_length', field: 'actualOutputTokens', kind: 'count', unit: 'tokens', origin: 'server', source: 'alias' },
  // The workload.
  count('prefix_group', 'prefixGroup', '', 'workload'),
  { column: 'session_id', field: 'sessionId', kind: 'string', unit: '', origin: 'workload', source: 'record', repeats: true },
  count('dataset_index', 'datasetIndex', '', 'workload'),
  // Status.
  { column: 'success', field: 'success', kind: 'boolean', unit: '', origin: 'client', source: 'record' },
  { column: 'error', field: 'error', kind: 'string', unit: '', origin: 'client', source: 'record', repeats: true },
  count('http_status', 'httpStatus', '', 'client'),
  count('num_retractions', 'numRetractions', '', 'server'),
  // servelab's own fields beyond the first table.
  count('retries', 'retries', '', 'router'),
  { column: 'finish_reason', field: 'finishReason', kind: 'string', unit: '', origin: 'server', source: 'record', repeats: true },
  { column: 'error_message', field: 'errorMessage', kind: 'string', unit: '', origin: 'client', source: 'record' },
  // Under maxConcurrency: when the load generator handed the request to the client, and whether it waited for a slot.
  time('dispatch_time', 'dispatchTime', 'load-generator'),
  { column: 'held_for_concurrency', field: 'heldForConcurrency', kind: 'boolean', unit: '', origin: 'load-generator', source: 'record' },
  // SGLang's finer timing keys (read by presence from the stream or joined from the server's request log, see
  // docs/protocols.md).
  time('server_dispatch_time', 'serverDispatchTime', 'server'),
  time('server_response_sent_time', 'serverResponseSentTime', 'server'),
  time('server_finish_time', 'serverFinishTime', 'server'),
  { column: 'prefill_waiting_latency_s', field: 'prefillWaitingLatency', kind: 'float', unit: 's', origin: 'server', source: 'record' },
  { column: 'prefill_launch_latency_s', field: 'prefillLaunchLatency', kind: 'float', unit: 's', origin: 'server', source: 'record' },
  { column: 'decode_throughput_tok_s', field: 'decodeThroughputTokensPerSecond', kind: 'float', unit: 'tokens/s', origin: 'server', source: 'record' },
  count('server_status_code', 'serverStatusCode', '', 'server'),
  // What the server reported that could not be true and was left empty: `field:reason` entries joined by `;`.
  { column: 'data_quality', field: 'dataQuality', kind: 'string', unit: '', origin: 'analysis', source: 'record' },
  // The first users' own columns (the framework servelab grew out of), beside servelab's: those of theirs that
  // servelab already writes under the same name (success, host, ttft, ...) are not repeated.
  { column: 'req_id', kind: 'string', unit: '', origin: 'analysis', source: 'computed', compute: reqId },
  { column: 'has_generated_text', kind: 'boolean', unit: '', origin: 'analysis', source: 'computed', compute: hasGeneratedText },
  { column: 'actual_total_tokens', kind: 'count', unit: 'tokens', origin: 'analysis', source: 'computed', compute: actualTotalTokens },
  count('output_tokens_from_trace', 'outputTokensFromTrace', 'tokens', 'trace'),
  // Prefill/decode disaggregation: the two servers of a PD request, the room that pairs them, and its phases. Empty
  // for a co-located run. A group of their own at the end, so no existing column moves.
  { column: 'prefill_host', field: 'prefillHost', kind: 'string', unit: '', origin: 'router', source: 'record', repeats: true },
  { column: 'decode_host', field: 'decodeHost', kind: 'string', unit: '', origin: 'router', source: 'record', repeats: true },
  { column: 'bootstrap_room', field: 'bootstrapRoom', kind: 'string', unit: '', origin: 'router', source: 'record' },
  { column: 'prefill_queue_time', field: 'prefillQueueTime', kind: 'float', unit: 's', origin: 'server', source: 'record' },
  { column: 'prefill_forward_time', field: 'prefillForwardTime', kind: 'float', unit: 's', origin: 'server', source: 'record' },
  { column: 'kv_transfer_time', field: 'kvTransferTime', kind: 'float', unit: 's', origin: 'server', source: 'record' },
  { column: 'decode_queue_time', field: 'decodeQueueTime', kind: 'float', unit: 's', origin: 'server', source: 'record' },
  // The decode server's wait for the transfer (its KV held reserved); last, so no column before it moves.
  { column: 'kv_transfer_wait_time', field: 'kvTransferWaitTime', kind: 'float', unit: 's', origin: 'server', source: 'record' },
  // Runs across hosts: the machine `host` ran on by name (a Slurm node), beside its URL. Empty on one host.
  { column: 'host_node', field: 'hostNode', kind: 'string', unit: '', origin: 'analysis', source: 'record', repeats: true },
] as const satisfies readonly RequestColumn[];

/**
 * Every column of requests.csv, in its order; requests.parquet has the same columns in the same order, and
 * requests.jsonl the stored ones (the `record` entries) in this order, then `inter_token_latencies`.
 */
export const REQUEST_COLUMNS: readonly RequestColumn[] = COLUMN_TABLE;

/** The stored fields, in file order: what requests.jsonl writes and the record store keeps. */
export const STORED_COLUMNS: readonly StoredColumn[] = REQUEST_COLUMNS.filter((column): column is StoredColumn => column.source === 'record');

/** The header of requests.csv (and the schema of requests.parquet). */
export const REQUESTS_CSV_COLUMNS: readonly string[] = REQUEST_COLUMNS.map((column) => column.column);

/** The JSONL key of the per-token gaps (seconds). */
export const INTER_TOKEN_LATENCIES_KEY = 'inter_token_latencies';

/**
 * Fields of a record that are not columns: the warmup flag (warmups are left out of every file), the per-token gaps
 * (an array, under INTER_TOKEN_LATENCIES_KEY in requests.jsonl) and a stalled server's wait (worked out by analysis
 * from the run's hang/restore events each time it runs, reported with the hang event, never stored).
 */
export const NON_COLUMN_FIELDS = ['warmup', 'interTokenLatencies', 'serverStallSeconds'] as const satisfies readonly (keyof RequestRecord)[];

/**
 * Every field of RequestRecord is a stored column or a non-column field: a field added to the record type without an
 * entry in the table fails to compile here ("Type 'false' does not satisfy the constraint 'true'"), so no field is
 * ever silently left out of the files or the record store.
 */
type StoredFieldName = Extract<(typeof COLUMN_TABLE)[number], { source: 'record' }>['field'];
export type UnlistedRecordFields = Exclude<keyof RequestRecord, StoredFieldName | (typeof NON_COLUMN_FIELDS)[number]>;
type MustBeTrue<Value extends true> = Value;
export type EveryRecordFieldListed = MustBeTrue<[UnlistedRecordFields] extends [never] ? true : false>;
