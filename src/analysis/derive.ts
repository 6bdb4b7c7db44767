import type { RequestRecord } from '../types/record.js';
import type { DerivedColumnName } from '../types/summary.js';
import type { Seconds } from '../types/time.js';
import { takeFloat64, type Float64Arena } from './float-arena.js';

/** Every derived column of docs/metrics.md, in seconds; a column is undefined when one of its inputs is missing. */
export type DerivedColumns = Partial<Record<DerivedColumnName, Seconds>>;

function difference(end: number | undefined, start: number | undefined): Seconds | undefined {
  return end === undefined || start === undefined ? undefined : end - start;
}

/**
 * Time per output token after the first, as bench_serving defines it: decode time over (output tokens − 1). Undefined
 * for one output token or fewer (there is no inter-token time to measure) and when the server did not report the count.
 */
function timePerOutputToken(record: RequestRecord): Seconds | undefined {
  const decodeTime = difference(record.finishTime, record.firstTokenTime);
  const outputTokens = record.actualOutputTokens;
  if (decodeTime === undefined || outputTokens === undefined || outputTokens <= 1) return undefined;
  return decodeTime / (outputTokens - 1);
}

/**
 * Whether a record is a prefill/decode (PD) request: its router named its prefill server. Its server timestamps are the
 * decode server's (the one that answered), where SGLang stamps no tokenize end and runs no prefill: the decode
 * scheduler's waiting queue starts when the KV has arrived (`wait_queue_entry_time`, python/sglang/srt/observability/
 * req_time_stats.py, SchedulerReqTimeStats: prealloc queue -> transfer queue -> waiting queue -> forward), so
 * `queue_time_start - server_created_time` there is the whole wait for the prefill half, and the "prefill" from its
 * `forward_entry_time` to the first token is the prebuilt step that streams the token the prefill server computed.
 */
function isPdRecord(record: RequestRecord): boolean {
  return record.prefillHost !== undefined;
}

/** tokenize_time: not measured on a PD request (its decode server's interval is the wait for the KV, not a tokenize). */
function tokenizeTime(record: RequestRecord): Seconds | undefined {
  return isPdRecord(record) ? undefined : difference(record.queueTimeStart, record.serverCreatedTime);
}

/** prefill_time: on a PD request, the prefill server's forward (prefill_forward_time), where the prompt was prefilled. */
function prefillTime(record: RequestRecord): Seconds | undefined {
  return isPdRecord(record) ? record.prefillForwardTime : difference(record.serverFirstTokenTime, record.queueTimeEnd);
}

function subtractStall(seconds: Seconds | undefined, record: RequestRecord): Seconds | undefined {
  return seconds === undefined || record.serverStallSeconds === undefined ? seconds : seconds - record.serverStallSeconds;
}

export interface DerivedColumnDefinition {
  name: DerivedColumnName;
  compute(record: RequestRecord): Seconds | undefined;
}

/**
 * The formulas, in the order of `requests.csv`. Client times (arrival, first token, finish) and server times (created,
 * queue, first token) come from different clocks: columns that mix them (network_time, server_latency) include the
 * offset between the two clocks, which is near zero on one host and must be read with care across hosts.
 */
export const DERIVED_COLUMNS: readonly DerivedColumnDefinition[] = [
  { name: 'total_latency', compute: (r) => difference(r.finishTime, r.arrivalTime) },
  { name: 'server_latency', compute: (r) => difference(r.finishTime, r.routerSendTime) },
  { name: 'ttft', compute: (r) => difference(r.firstTokenTime, r.arrivalTime) },
  { name: 'server_ttft', compute: (r) => difference(r.serverFirstTokenTime, r.serverCreatedTime) },
  { name: 'queue_time_in_router', compute: (r) => difference(r.routerSendTime, r.arrivalTime) },
  // A request sent to a hung (stopped) server waits for it to resume: that wait is serverStallSeconds, not the network.
  { name: 'network_time', compute: (r) => subtractStall(difference(r.serverCreatedTime, r.routerSendTime), r) },
  { name: 'tokenize_time', compute: tokenizeTime },
  { name: 'pure_queue_time', compute: (r) => difference(r.queueTimeEnd, r.queueTimeStart) },
  { name: 'queue_time_in_server', compute: (r) => difference(r.serverFirstTokenTime, r.serverCreatedTime) },
  { name: 'prefill_time', compute: prefillTime },
  { name: 'decode_time', compute: (r) => difference(r.finishTime, r.firstTokenTime) },
  { name: 'tpot', compute: timePerOutputToken },
  { name: 'send_lag', compute: (r) => difference(r.arrivalTime, r.scheduledTime) },
  { name: 'intended_latency', compute: (r) => difference(r.finishTime, r.scheduledTime) },
];

export const DERIVED_COLUMN_NAMES: readonly DerivedColumnName[] = DERIVED_COLUMNS.map((column) => column.name);

/** The derived columns of one record. */
export function deriveColumns(record: RequestRecord): DerivedColumns {
  const derived: DerivedColumns = {};
  for (const column of DERIVED_COLUMNS) {
    const value = column.compute(record);
    if (value !== undefined) derived[column.name] = value;
  }
  return derived;
}

/**
 * The derived columns of many records as one Float64Array per column, NaN where a value is missing: the fast path for
 * statistics over a million records. One pass reads each record's timestamps once (missing reads as NaN, and NaN
 * propagates through every difference, which is exactly "undefined when an input is missing"). The formulas are those
 * of DERIVED_COLUMNS; a test checks that both agree.
 */
export function deriveColumnArrays(records: readonly RequestRecord[], arena?: Float64Arena): Record<DerivedColumnName, Float64Array> {
  const count = records.length;
  const column = (): Float64Array => takeFloat64(arena, count);
  const arrays: Record<DerivedColumnName, Float64Array> = {
    total_latency: column(),
    server_latency: column(),
    ttft: column(),
    server_ttft: column(),
    queue_time_in_router: column(),
    network_time: column(),
    tokenize_time: column(),
    pure_queue_time: column(),
    queue_time_in_server: column(),
    prefill_time: column(),
    decode_time: column(),
    tpot: column(),
    send_lag: column(),
    intended_latency: column(),
  };
  const MISSING = Number.NaN;
  for (let index = 0; index < count; index++) {
    const record = records[index] as RequestRecord;
    const scheduled = record.scheduledTime ?? MISSING;
    const arrival = record.arrivalTime ?? MISSING;
    const routerSend = record.routerSendTime ?? MISSING;
    const created = record.serverCreatedTime ?? MISSING;
    const queueStart = record.queueTimeStart ?? MISSING;
    const queueEnd = record.queueTimeEnd ?? MISSING;
    const serverFirstToken = record.serverFirstTokenTime ?? MISSING;
    const firstToken = record.firstTokenTime ?? MISSING;
    const finish = record.finishTime ?? MISSING;
    const outputTokens = record.actualOutputTokens;
    const decode = finish - firstToken;
    arrays.total_latency[index] = finish - arrival;
    arrays.server_latency[index] = finish - routerSend;
    arrays.ttft[index] = firstToken - arrival;
    arrays.server_ttft[index] = serverFirstToken - created;
    arrays.queue_time_in_router[index] = routerSend - arrival;
    arrays.network_time[index] = created - routerSend - (record.serverStallSeconds ?? 0);
    const pd = record.prefillHost !== undefined;
    arrays.tokenize_time[index] = pd ? MISSING : queueStart - created;
    arrays.pure_queue_time[index] = queueEnd - queueStart;
    arrays.queue_time_in_server[index] = serverFirstToken - created;
    arrays.prefill_time[index] = pd ? (record.prefillForwardTime ?? MISSING) : serverFirstToken - queueEnd;
    arrays.decode_time[index] = decode;
    arrays.tpot[index] = outputTokens !== undefined && outputTokens > 1 ? decode / (outputTokens - 1) : MISSING;
    arrays.send_lag[index] = arrival - scheduled;
    arrays.intended_latency[index] = finish - scheduled;
  }
  return arrays;
}
