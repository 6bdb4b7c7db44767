import type { Milliseconds } from '../../types/time.js';

/**
 * What the prefill server tells the decode server when a request's KV has arrived (with its first token, as SGLang's
 * transfer carries the first output id and cached_tokens in its metadata buffer: python/sglang/srt/disaggregation/
 * decode.py, DecodeTransferQueue.pop_transferred). The durations are the prefill half's phases, in milliseconds.
 */
export interface KvArrival {
  /** Prefill server: arrival to forward entry (the bootstrap queue, waiting for the decode server's preallocation, then the waiting queue). */
  prefillQueueMs: Milliseconds;
  /** Prefill server: forward entry to the prompt's last chunk done (the first token). */
  prefillForwardMs: Milliseconds;
  /** The KV's trip over the link: prefill done to the last byte at the decode server (sharing the link, plus its latency). */
  kvTransferMs: Milliseconds;
  /** Prompt tokens the prefill server found in its radix cache. */
  cachedTokens: number;
}

/** A PD request's phases on both servers, in milliseconds (the record's columns hold them in seconds). */
export interface PdPhases extends KvArrival {
  /** Decode server: KV space reserved (end of preallocation) to the KV's arrival: how long it held that space waiting. */
  kvTransferWaitMs: Milliseconds;
  /** Decode server: the KV's arrival to joining the running batch, where its first token is streamed. */
  decodeQueueMs: Milliseconds;
}

/** The meta_info key under which the simulated decode server reports a PD request's phases (not an SGLang key). */
export const PD_PHASES_META_KEY = 'servelab_pd_phases';

/** The phases in seconds, under the record columns' names, as the simulated decode server reports them. */
export function pdPhasesMeta(phases: PdPhases): Record<string, number> {
  return {
    prefill_queue_time: phases.prefillQueueMs / 1000,
    prefill_forward_time: phases.prefillForwardMs / 1000,
    kv_transfer_time: phases.kvTransferMs / 1000,
    kv_transfer_wait_time: phases.kvTransferWaitMs / 1000,
    decode_queue_time: phases.decodeQueueMs / 1000,
  };
}
