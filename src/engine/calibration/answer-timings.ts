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
  /** The engine's time between steps beside the probe (see betweenStepsMs), where the streams' token times show it. */
  betweenStepsMs?: number;
}

/**
 * The probe's prefill step, and the KV the batch read in it, when every member had its first token before the probe
 * entered the forward pass and was still decoding when the probe's prefill ended; otherwise null. Without server
 * timestamps, client-side times stand in (network included).
 */
export function mixedSample(members: StreamResult[], probe: StreamResult, promptTokens: number, memberEventTimesMs?: readonly (readonly number[])[]): MixedSample | null {
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
    // The probe is not streamed where the server stamps (measure-server.ts): its end of prefill reaches the client's
    // clock through the streams', whose first tokens the client saw at their own prefill_finished_time plus the path.
    const pathMs = median(members.map((member) => member.firstEventMs - (member.meta['prefill_finished_time'] as number) * 1000));
    const betweenMs = memberEventTimesMs === undefined ? undefined : betweenStepsMs(memberEventTimesMs, prefilled * 1000 + pathMs, timing.prefillMs);
    return { stepMs: timing.prefillMs, kvTokens, fromServer: true, ...(betweenMs === undefined ? {} : { betweenStepsMs: betweenMs }) };
  }
  for (const member of members) {
    if (member.firstEventMs > probe.sentMs || member.lastEventMs < probe.firstEventMs) return null;
    const stepMs = (member.lastEventMs - member.firstEventMs) / Math.max(1, member.completionTokens - 1);
    kvTokens += promptTokens + 1 + Math.floor((probe.sentMs - member.firstEventMs) / Math.max(stepMs, 1e-3));
  }
  return { stepMs: timing.prefillMs, kvTokens, fromServer: false };
}

/**
 * The engine's time between two steps, read beside a mixed probe. The probe's prefill, as the server stamped it
 * (forward_entry_time to prefill_finished_time), runs from the start of its first step to the end of its last (one
 * step, or more where its prompt was cut into chunks). A decoding stream's tokens come at the ends of the same steps:
 * from its token at the end of the step before the probe's first to its token with the probe's first token, its
 * interval spans the same steps and one more stretch of the loop's work between steps. That difference, the median
 * over the streams, is the reading. A decode cell, read off token intervals, carries that time; a prefill or a mixed
 * cell, read off a request's stamps, does not, and the twin runs steps back to back (docs/simulated-engine.md, "Pass
 * 9"). A stream counts only where it has tokens within a quarter of its own step of both ends (the probe's steps were
 * its steps) and the reading is under half its step; undefined where none does, or the probe's stamps are missing.
 */
export function betweenStepsMs(memberEventTimesMs: readonly (readonly number[])[], probeFirstEventMs: number, probeStepMs: number): number | undefined {
  if (!Number.isFinite(probeStepMs) || !Number.isFinite(probeFirstEventMs)) return undefined;
  const nearestTo = (times: readonly number[], targetMs: number): number => {
    let nearest = 0;
    for (let index = 1; index < times.length; index++) {
      if (Math.abs((times[index] as number) - targetMs) < Math.abs((times[nearest] as number) - targetMs)) nearest = index;
    }
    return nearest;
  };
  const readings: number[] = [];
  for (const times of memberEventTimesMs) {
    if (times.length < 3) continue;
    const ownStepMs = median(times.slice(1).map((time, index) => time - (times[index] as number)));
    const tolerance = ownStepMs / 4;
    const end = nearestTo(times, probeFirstEventMs);
    const before = nearestTo(times, probeFirstEventMs - probeStepMs);
    if (before >= end || Math.abs((times[end] as number) - probeFirstEventMs) > tolerance) continue;
    const reading = (times[end] as number) - (times[before] as number) - probeStepMs;
    if (reading > -tolerance && reading < ownStepMs / 2) readings.push(reading);
  }
  return readings.length === 0 ? undefined : median(readings);
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
