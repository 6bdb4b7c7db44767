import type { StreamResult } from './calibration-client.js';
import { median } from './robust-statistics.js';

/**
 * What calibration reads from its answers: step durations from the server's --enable-metrics timestamps when the
 * answers carry them, else from the client's event times (network included).
 */

/** One mixed step as measured: its duration and the KV its decoding batch read. */
export interface MixedSample {
  stepMs: number;
  /** KV tokens the decoding batch read in the probe's step. */
  kvTokens: number;
  fromServer: boolean;
}

/**
 * The probe's prefill step, and the KV the batch read in it, when every member had its first token before the probe
 * entered the forward pass and was still decoding when the probe's prefill ended; otherwise null. Without server
 * timestamps, client-side times stand in (network included).
 */
export function mixedSample(members: StreamResult[], probe: StreamResult, promptTokens: number): MixedSample | null {
  const timing = stepTimes(probe);
  const forward = probe.meta['forward_entry_time'];
  const prefilled = probe.meta['prefill_finished_time'];
  let kvTokens = 0;
  if (timing.fromServer && typeof forward === 'number' && typeof prefilled === 'number') {
    for (const member of members) {
      const memberPrefilled = member.meta['prefill_finished_time'];
      const memberFinished = member.meta['request_finished_ts'];
      if (typeof memberPrefilled !== 'number' || typeof memberFinished !== 'number') return null;
      if (memberPrefilled > forward || memberFinished < prefilled) return null;
      const stepSeconds = (memberFinished - memberPrefilled) / Math.max(1, member.completionTokens - 1);
      kvTokens += promptTokens + 1 + Math.floor((forward - memberPrefilled) / stepSeconds);
    }
    return { stepMs: timing.prefillMs, kvTokens, fromServer: true };
  }
  for (const member of members) {
    if (member.firstEventMs > probe.sentMs || member.lastEventMs < probe.firstEventMs) return null;
    const stepMs = (member.lastEventMs - member.firstEventMs) / Math.max(1, member.completionTokens - 1);
    kvTokens += promptTokens + 1 + Math.floor((probe.sentMs - member.firstEventMs) / Math.max(stepMs, 1e-3));
  }
  return { stepMs: timing.prefillMs, kvTokens, fromServer: false };
}

/**
 * True when every request had its first token before any had its last (server timestamps, else client event times):
 * then the whole batch decoded together for a while.
 */
export function decodedTogether(results: StreamResult[]): boolean {
  const firsts = results.map((result) => result.meta['prefill_finished_time']);
  const lasts = results.map((result) => result.meta['request_finished_ts']);
  if ([...firsts, ...lasts].every((value) => typeof value === 'number')) return Math.max(...(firsts as number[])) < Math.min(...(lasts as number[]));
  return Math.max(...results.map((result) => result.firstEventMs)) < Math.min(...results.map((result) => result.lastEventMs));
}

/**
 * The median decode span (first token to last, ms) of the requests prefilled in the batch's last prefill step (those
 * whose prefill ended within 1 ms of the last one: one step, on any real engine), so one stalled answer among them
 * cannot carry the figure.
 */
export function lastPrefilledSpanMs(results: StreamResult[]): number {
  const prefilledAtMs = (result: StreamResult): number => {
    const server = result.meta['prefill_finished_time'];
    return typeof server === 'number' ? server * 1000 : result.firstEventMs;
  };
  const lastMs = Math.max(...results.map(prefilledAtMs));
  const spansMs = results
    .filter((result) => prefilledAtMs(result) >= lastMs - 1)
    .map((result) => stepTimes(result).decodeStepMs * (result.completionTokens - 1));
  return median(spansMs);
}

export function stepTimes(result: StreamResult): { prefillMs: number; decodeStepMs: number; fromServer: boolean } {
  const meta = result.meta;
  const forward = meta['forward_entry_time'];
  const prefill = meta['prefill_finished_time'];
  const finished = meta['request_finished_ts'];
  const decodeSteps = result.completionTokens - 1;
  if (typeof forward === 'number' && typeof prefill === 'number' && typeof finished === 'number') {
    return {
      prefillMs: (prefill - forward) * 1000,
      decodeStepMs: ((finished - prefill) * 1000) / decodeSteps,
      fromServer: true,
    };
  }
  // Without --enable-metrics: time to the first chunk, and the spread of the later chunks.
  return {
    prefillMs: result.firstEventMs - result.sentMs,
    decodeStepMs: (result.lastEventMs - result.firstEventMs) / decodeSteps,
    fromServer: false,
  };
}
