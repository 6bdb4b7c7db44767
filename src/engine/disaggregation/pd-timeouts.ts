import type { Milliseconds } from '../../types/time.js';

/**
 * How long a decode server waits for a request's KV once it has preallocated room for it and told the prefill server
 * where to send it: SGLang's `SGLANG_DISAGGREGATION_WAITING_TIMEOUT`, 300 s by default (python/sglang/srt/environ.py,
 * the "PD Disaggregation" fields). Its KV receivers (mooncake/conn.py, nixl/conn.py, mori/conn.py) start the clock
 * when they send the preallocated indices (`init_time` in `init`), and a poll past it fails the room; the decode
 * scheduler then aborts the request with a 500 (disaggregation/decode.py, "Decode transfer failed for request").
 * Without it a decode request whose prefill server died mid-transfer would hold its reserved KV and its client forever.
 */
export const DEFAULT_KV_WAITING_TIMEOUT_MS: Milliseconds = 300_000;

/**
 * A PD timeout's error, in SGLang's words (the scheduler's prefix, the KV manager's KVTransferError with the poll state
 * the room was stuck in), then what it means here and the setting that bounds it.
 */
function pdTimeoutMessage(prefix: string, requestId: string, room: string, waitedMs: Milliseconds, pollState: string, meaning: string): string {
  const seconds = (waitedMs / 1000).toFixed(1);
  return (
    `${prefix} for request rid=${requestId} bootstrap_room=${room} with exception ` +
    `KVTransferError(bootstrap_room=${room}): Request ${room} timed out after ${seconds}s in KVPoll.${pollState} (${meaning})`
  );
}

/** The answer's error for a request whose KV did not come in time (decode.py's prefix). */
export function kvWaitingTimeoutMessage(requestId: string, room: string, waitedMs: Milliseconds): string {
  return pdTimeoutMessage(
    'Decode transfer failed',
    requestId,
    room,
    waitedMs,
    'WaitingForInput',
    "its prefill server never delivered the KV: crashed, hung or overloaded; the wait is SGLang's SGLANG_DISAGGREGATION_WAITING_TIMEOUT, --disaggregation-waiting-timeout on servelab sim-server",
  );
}

/**
 * How long a prefill server keeps a request in its bootstrap queue waiting for its decode server to preallocate and
 * send the KV indices: SGLang's `SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT`, 300 s by default (environ.py). Its KV
 * senders start the clock when they are created, as the request enters the bootstrap queue (`init_time`), and a poll
 * still `Bootstrapping` past it fails the room; the prefill scheduler aborts the request with a 500
 * (disaggregation/prefill.py, "Prefill bootstrap failed for request").
 */
export const DEFAULT_BOOTSTRAP_TIMEOUT_MS: Milliseconds = 300_000;

/** The answer's error for a prefill request whose decode server never said where to send the KV (prefill.py's prefix). */
export function bootstrapTimeoutMessage(requestId: string, room: string, waitedMs: Milliseconds): string {
  return pdTimeoutMessage(
    'Prefill bootstrap failed',
    requestId,
    room,
    waitedMs,
    'Bootstrapping',
    "its decode server never preallocated the KV: crashed, hung or full; the wait is SGLang's SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT, --disaggregation-bootstrap-timeout on servelab sim-server",
  );
}
