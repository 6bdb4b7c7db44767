import { describe, expect, test } from 'vitest';
import { calibrateProfile } from '../../../src/engine/calibration/calibrate-profile.js';
import { identifyScheduling, readSchedulingProbe, type SchedulingProbeSample, schedulingEvidence, schedulingVerdict } from '../../../src/engine/calibration/identify-scheduling.js';
import { systemClock } from '../../../src/clock/clock.js';
import { startSimServer } from '../../../src/engine/http/start-sim-server.js';
import { startSteppingEngine } from '../../helpers/stepping-engine.js';
import { eightMsProfile } from '../../helpers/test-profiles.js';

const PROFILE = eightMsProfile('black-box');

/** Calibrates a sim-server over HTTP only, with sweeps cut to the minimum: the scheduling probe is what is tested. */
async function calibrateBlackBox(enableMixedChunk: boolean) {
  const server = await startSimServer({ profile: PROFILE, maxRunningRequests: 48, chunkedPrefillSize: 1024, maxTotalTokens: 150_000, enableMixedChunk });
  try {
    return await calibrateProfile({ url: server.url, repeats: 1, decodeTokens: 6, promptLengths: [64, 512], batchSizes: [4], concurrencyPromptLengths: [32], mixedSweep: false });
  } finally {
    await server.close();
  }
}

describe('calibration identifies how the server schedules', () => {
  test('a sim-server with --enable-mixed-chunk: prefill chunks share steps with decoding, recorded in both profiles with its limits', async () => {
    const result = await calibrateBlackBox(true);
    const scheduling = result.profile.scheduling;
    expect(scheduling, JSON.stringify(result.measurements.scheduling)).toMatchObject({
      mixedChunk: true,
      chunkedPrefillSize: 1024,
      maxRunningRequests: 48,
      maxTotalTokens: 150_000,
      source: 'server_info',
    });
    expect(result.measuredProfile?.scheduling).toEqual(scheduling);
    expect(scheduling?.evidence).toMatch(/share steps with decoding/);
  });

  test('a sim-server without it: prefill runs in steps of its own', async () => {
    const result = await calibrateBlackBox(false);
    expect(result.profile.scheduling?.mixedChunk, result.profile.scheduling?.evidence).toBe(false);
    expect(result.profile.scheduling?.evidence).toMatch(/steps of its own/);
  });
});

describe('the probe on an engine whose step time moves between runs', () => {
  test('each probe reads its streams against their own steps: the stall is the mixed step\'s, not a difference of two regimes', async () => {
    // 50 ms steps while the first four requests run, 20 ms after; a prompt's step lasts 40 ms more. Against the same
    // streams run alone first (at 50 ms), later probes' spans "grew" by 39 x (20 - 50) + 40 = -1130 ms.
    const engine = await startSteppingEngine({ slowStepMs: 50, fastStepMs: 20, slowRequests: 4, prefillExtraMs: 40 });
    try {
      const limits = { modelPath: 'stepping', maxRunningRequests: 64, chunkedPrefillSize: 1024, contextLength: 8192, maxTotalTokens: 65_536 };
      const prompt = (length: number): number[] => Array.from({ length }, (_, index) => index + 1);
      const result = await identifyScheduling({ baseUrl: engine.url, clock: systemClock, limits, prompt, decodeStepMs: 20, timeoutMs: 30_000 });
      expect(result.samples, result.evidence).toHaveLength(3);
      for (const sample of result.samples) {
        expect(sample, result.evidence).toMatchObject({ serverExplained: true, mixed: true });
        // The mixed step's share: the prompt's step less one decode step (the engine's 40 ms), well inside half a step.
        expect(Math.abs((sample.serverStallMs as number) - (sample.prefillMs - (sample.serverDecodeStepMs as number))), result.evidence).toBeLessThan(
          (sample.serverDecodeStepMs as number) / 2,
        );
      }
      expect(result.mixedChunk).toBe(true);
      expect(result.evidence).not.toMatch(/grew by -/);
    } finally {
      await engine.close();
    }
  });
});

describe('reading one probe', () => {
  // Streams decoding every `stepMs` (10 by default); the prompt is sent 3.5 steps in and its first token arrives at 6.
  const streams = (tokenAtPrompt: boolean, stepMs = 10): number[][] =>
    Array.from({ length: 3 }, () => [0, 1, 2, 3, 4, 5, ...(tokenAtPrompt ? [6, 7, 8, 9] : [7, 8, 9])].map((step) => step * stepMs));
  /** Server spans of the three streams: their steps at `stepMs` (one per gap between their events) and `growthMs`. */
  const spans = (events: readonly number[], stepMs: number, growthMs: number): number[] => Array.from({ length: 3 }, () => (events.length - 1) * stepMs + growthMs);

  test('stream tokens that arrive with the prompt\'s first token read as mixed', () => {
    const sample = readSchedulingProbe(streams(true), 35, 60.4, 12);
    expect(sample).toMatchObject({ mixed: true, decodeGapMs: 10 });
    expect(sample?.nearestTokenMs).toBeCloseTo(0.4, 6);
  });

  test('streams that stalled through the prompt\'s prefill read as apart, with the stall measured', () => {
    // 50 to 70: the prefill step (50-60) and the next decode step (60-70).
    const sample = readSchedulingProbe(streams(false), 35, 60, 10);
    expect(sample).toMatchObject({ mixed: false, stallMs: 20, nearestTokenMs: 10 });
  });

  test('with server timestamps, the streams\' stall decides: the prompt\'s whole step is apart, that step less a decode step is mixed', () => {
    // Client reads merged on a busy host (the streams' token arrived with the prompt's) must not outvote the server.
    const merged = streams(true);
    expect(readSchedulingProbe(merged, 35, 60, 12, spans(merged[0] as number[], 10, 12.2))).toMatchObject({ coincided: true, mixed: false, serverDecodeStepMs: 10 });
    const stalled = streams(false);
    const apart = readSchedulingProbe(stalled, 35, 60, 12, spans(stalled[0] as number[], 10, 4.1));
    expect(apart).toMatchObject({ coincided: false, mixed: true, serverDecodeStepMs: 10 });
    expect(apart?.serverStallMs).toBeCloseTo(4.1, 9);
  });

  test("a stall neither scheduling explains (beyond the prompt's step by more than half a decode step) leaves the verdict to the client's reading", () => {
    // transformers without CUDA graphs: 213 ms against a 136 ms prompt step and a 120 ms decode step.
    for (const coincided of [true, false]) {
      const events = streams(coincided, 120);
      expect(readSchedulingProbe(events, 420, 720, 136, spans(events[0] as number[], 120, 213))).toMatchObject({ serverExplained: false, coincided, mixed: coincided });
    }
  });

  test("the streams' spans are priced at their own steps outside the prompt's steps: transformers' probe that read -1283 ms", () => {
    // One stream of the second probe of a calibration of transformers' continuous batching (CUDA graphs off; engine
    // log, ms from its first token). The prompt was sent at 147.5 and waited to 216.3 to enter a step (the streams'
    // step then swung to 93 ms), its 91.7 ms step gave the streams a token with its first, at 308.0; the steps after
    // ran at about 26 ms. The same streams alone, in the run before, decoded at 66 ms a step: 2588 ms for these 39.
    const events = [
      0.0, 38.5, 78.3, 122.8, 216.2, 308.0, 396.0, 439.6, 467.1, 492.5, 518.3, 543.9, 569.8, 604.0, 643.6, 674.4, 700.2, 725.8, 751.4, 777.1, 802.8,
      828.3, 854.2, 880.1, 905.8, 931.6, 958.5, 984.7, 1011.1, 1037.4, 1063.8, 1089.9, 1120.6, 1146.8, 1173.0, 1199.5, 1225.6, 1252.0, 1278.4, 1305.3,
    ];
    const sample = readSchedulingProbe([events], 147.5, 308.0, 91.7, [1305.3]);
    // Every gap but the one that ended with the prompt's first token (91.8 ms) prices the span: 1213.5 / 38 ms.
    expect(sample?.serverDecodeStepMs).toBeCloseTo(1213.5 / 38, 9);
    expect(sample?.serverStallMs).toBeCloseTo(1305.3 - (39 * 1213.5) / 38, 9);
    // About 60 ms: the prompt's step less one decode step (59.8), mixed, as the client saw too.
    expect(sample).toMatchObject({ serverExplained: true, coincided: true, mixed: true });
  });

  test('a stall no scheduling allows is unreadable and named: spans that shrank, or grew far beyond the prompt\'s step', () => {
    const events = streams(true);
    // Less than the streams' own steps account for, by more than half a step: no prompt makes a stream decode faster.
    const shrank = readSchedulingProbe(events, 35, 60, 12, spans(events[0] as number[], 10, -5.5));
    expect(shrank).toMatchObject({ serverExplained: false, coincided: true });
    expect(shrank?.unreadable).toMatch(/5\.50 ms shorter than their own steps/);
    // Within half a step below the least either scheduling allows: jitter, read (here as mixed).
    expect(readSchedulingProbe(events, 35, 60, 12, spans(events[0] as number[], 10, -4.5))?.unreadable).toBeUndefined();
    // Twice the prompt's 12 ms step and a 10 ms decode step is the most a stall can be read at.
    expect(readSchedulingProbe(events, 35, 60, 12, spans(events[0] as number[], 10, 34.5))?.unreadable).toMatch(/34\.50 ms longer than their own steps add up to, over twice the prompt's 12\.00 ms step/);
    expect(readSchedulingProbe(events, 35, 60, 12, spans(events[0] as number[], 10, 33.5))).toMatchObject({ serverExplained: false, mixed: true });
  });

  test('streams that ended before the prompt\'s first token cannot be read', () => {
    expect(readSchedulingProbe([[0, 10, 20, 30]], 35, 60, 10)).toBeNull();
  });
});

describe('the words the probe leaves in the profile', () => {
  const sample = (serverStallMs: number, prefillMs: number, serverDecodeStepMs: number, unreadable?: string): SchedulingProbeSample => ({
    decodeGapMs: 39.5,
    nearestTokenMs: 0.15,
    stallMs: 74.1,
    prefillMs,
    serverStallMs,
    serverDecodeStepMs,
    serverExplained: unreadable === undefined,
    coincided: true,
    mixed: true,
    ...(unreadable === undefined ? {} : { unreadable }),
  });
  const shorter = "the streams' decode spans came out 1283.29 ms shorter than their own steps add up to";

  test('unreadable probes are counted and named, and left out of the medians', () => {
    const evidence = schedulingEvidence([sample(8.3, 73.7, 65.8), sample(-1283.29, 91.7, 66.4, shorter), sample(38.5, 65.7, 27.3)], 512, 4);
    expect(evidence).toMatch(/3 probes, 2 of 2 voting read as mixed: 1 probe unreadable, not voting \(the streams' decode spans came out 1283\.29 ms shorter/);
    expect(evidence).toMatch(/the engine's step time moved within the probe, or a stream was preempted\)/);
    expect(evidence).toMatch(/decode spans grew by 23\.40 ms against the prompt's 69\.70 ms prefill step \(their own decode step 46\.55 ms/);
    expect(evidence).toMatch(/: prefill chunks share steps with decoding$/);
  });

  test('with every probe unreadable, no stall median is printed and a client reading the same in every probe decides', () => {
    const evidence = schedulingEvidence([sample(-1283.29, 91.7, 66.4, shorter), sample(-1487.1, 65.7, 66.4, shorter)], 512, 4);
    expect(evidence).toMatch(/0 of 0 voting read as mixed: 2 probes unreadable/);
    expect(evidence).not.toMatch(/grew by/);
    expect(evidence).toMatch(/so the client's reading, the same in every probe, decided\); /);
    expect(evidence).toMatch(/: prefill chunks share steps with decoding$/);
    const split = schedulingEvidence([sample(-1283.29, 91.7, 66.4, shorter), { ...sample(-1487.1, 65.7, 66.4, shorter), coincided: false, mixed: false }], 512, 4);
    expect(split).toMatch(/: no probe could vote$/);
  });
});

describe('the verdict over the probes', () => {
  /** A probe read from the server's stall (mixed or apart) and from the client (coincided or not). */
  const probe = (mixedByServer: boolean, coincided: boolean, serverExplained = true): SchedulingProbeSample => ({
    decodeGapMs: 6.4,
    nearestTokenMs: coincided ? 0.08 : 6.4,
    stallMs: 23,
    prefillMs: 22.5,
    serverStallMs: mixedByServer ? 16 : 21,
    serverDecodeStepMs: 6.4,
    serverExplained,
    coincided,
    mixed: serverExplained ? mixedByServer : coincided,
  });

  test("stalls that disagree across probes leave the verdict to a client reading that is the same in every probe", () => {
    // bench/foreign-engine once: 1 of 3 stalls read mixed, every probe's streams had a token with the prompt's first.
    expect(schedulingVerdict([probe(true, true), probe(false, true), probe(false, true)])).toEqual({ mixedChunk: true, clientDecided: true });
    expect(schedulingVerdict([probe(true, false), probe(true, false), probe(false, false)])).toEqual({ mixedChunk: false, clientDecided: true });
  });

  test('a probe whose stall is unreadable does not vote; with none voting, a unanimous client reading decides, else none', () => {
    const unreadable = (coincided: boolean): SchedulingProbeSample => ({ ...probe(false, coincided, false), serverStallMs: -1283.29, unreadable: "the streams' decode spans came out 1283.29 ms shorter than their own steps add up to" });
    // Its client reading (together) would otherwise make two of three mixed; the two that vote split, and neither's
    // client reading saw the streams' tokens with the prompt's.
    expect(schedulingVerdict([probe(true, false), probe(false, false), unreadable(true)])).toEqual({ mixedChunk: false, clientDecided: true });
    expect(schedulingVerdict([unreadable(true), unreadable(true)])).toEqual({ mixedChunk: true, clientDecided: true });
    expect(schedulingVerdict([unreadable(false), unreadable(false)])).toEqual({ mixedChunk: false, clientDecided: true });
    expect(schedulingVerdict([unreadable(true), unreadable(false)])).toEqual({ mixedChunk: null, clientDecided: false });
  });

  test('stalls that agree decide, whatever the client read; so does the majority when the client is split too', () => {
    expect(schedulingVerdict([probe(false, true), probe(false, true), probe(false, true)])).toEqual({ mixedChunk: false, clientDecided: false });
    expect(schedulingVerdict([probe(true, true), probe(false, false), probe(false, true)])).toEqual({ mixedChunk: false, clientDecided: false });
    // A probe whose stall neither scheduling explains is the client's vote already, not a split of the server's.
    expect(schedulingVerdict([probe(true, true), probe(true, true, false), probe(true, true)])).toEqual({ mixedChunk: true, clientDecided: false });
  });
});
