import { SglangMetaInfo } from '../clients/sglang-native/sglang-meta-info.js';
import type { RequestRecord } from '../types/record.js';
import type { Seconds } from '../types/time.js';

type JsonObject = Record<string, unknown>;

/** `"bootstrap_room": 123...` in a request-log line's `request_parameters` text: its digits as written (63-bit). */
const BOOTSTRAP_ROOM_IN_PARAMETERS = /"bootstrap_room"\s*:\s*(\d+)/;

/**
 * The bootstrap room a request-log line's request carried (SGLang writes the `GenerateReqInput` fields, the room among
 * them, as a JSON string under `request_parameters`), read from the text so that a 63-bit room stays exact.
 */
export function bootstrapRoomOfLine(line: JsonObject): string | undefined {
  const parameters = line['request_parameters'];
  return typeof parameters === 'string' ? BOOTSTRAP_ROOM_IN_PARAMETERS.exec(parameters)?.[1] : undefined;
}

/**
 * A PD request's phases from its two request-log lines, each on its own server's clock (so no offset between servers
 * enters a phase). SGLang writes no PD timing key into meta_info (observability/req_time_stats.py,
 * `SchedulerReqTimeStats.convert_to_output_meta_info`: `forward_entry_time`, `prefill_finished_time`, `queue_time`,
 * the prefill latencies; the API server adds `request_received_ts`, `api_server_dispatch_finish_ts`,
 * `request_finished_ts`), so the phases are differences of those:
 * - prefill queue: prefill `forward_entry_time` − its `api_server_dispatch_finish_ts` (else `request_received_ts`):
 *   the scheduler's bootstrap queue, then its waiting queue;
 * - prefill forward: prefill `prefill_finished_time` − `forward_entry_time`;
 * - KV transfer: prefill `request_finished_ts` − `prefill_finished_time`: a prefill server finishes a request only when
 *   its transfer is done (it waits in the in-flight queue until then), so this is the transfer plus the result's trip
 *   from the scheduler to the API server (about a millisecond);
 * - decode queue: the decode line's `queue_time` (`forward_entry_time` − `wait_queue_entry_time`: from the transfer's
 *   end, when the decode scheduler moves the request to its waiting queue, to the prebuilt batch that runs it).
 * A difference that a missing key or a negative value makes meaningless stays empty.
 */
export function fillPdPhases(record: RequestRecord, prefillLine: JsonObject | undefined, decodeLine: JsonObject | undefined): void {
  if (prefillLine !== undefined) {
    const prefill = new SglangMetaInfo();
    prefill.readFinal(prefillLine);
    const entered = prefill.dispatchFinishTs ?? prefill.requestReceivedTs;
    setPhase(record, 'prefillQueueTime', difference(prefill.forwardEntryTime, entered));
    setPhase(record, 'prefillForwardTime', difference(prefill.prefillFinishedTime, prefill.forwardEntryTime));
    setPhase(record, 'kvTransferTime', difference(prefill.finishedTs, prefill.prefillFinishedTime));
  }
  if (decodeLine !== undefined) {
    const decode = new SglangMetaInfo();
    decode.readFinal(decodeLine);
    if (decode.queueTime !== undefined && decode.queueTime >= 0) setPhase(record, 'decodeQueueTime', decode.queueTime);
  }
}

function difference(later: number | undefined, earlier: number | undefined): Seconds | undefined {
  if (later === undefined || earlier === undefined) return undefined;
  const seconds = later - earlier;
  return seconds >= 0 ? seconds : undefined;
}

/** A phase the record has already (the simulated engine's own, exact) is kept. */
function setPhase(record: RequestRecord, key: 'prefillQueueTime' | 'prefillForwardTime' | 'kvTransferTime' | 'decodeQueueTime', value: Seconds | undefined): void {
  if (value !== undefined && record[key] === undefined) record[key] = value;
}
