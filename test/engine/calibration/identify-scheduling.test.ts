import { describe, expect, test } from 'vitest';
import { calibrateProfile } from '../../../src/engine/calibration/calibrate-profile.js';
import { readSchedulingProbe, type SchedulingProbeSample, schedulingVerdict } from '../../../src/engine/calibration/identify-scheduling.js';
import { startSimServer } from '../../../src/engine/http/start-sim-server.js';
import type { RooflineProfile } from '../../../src/types/engine.js';

/** Steps of about 8 ms: long enough that a step apart stands out from this machine's scheduling noise. */
const PROFILE: RooflineProfile = {
  kind: 'roofline',
  name: 'black-box',
  description: 'test',
  model: 'test/black-box',
  hardware: 'none',
  derivation: [],
  coefficients: { stepOverheadMs: 2, weightsFloorMs: 6, prefillPerTokenMs: 0.01, prefillAttentionPerPairMs: 1e-6, decodePerSequenceMs: 0.05, kvReadPerTokenMs: 1e-5 },
  maxTotalTokens: 200_000,
  contextLength: 16_384,
};

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

describe('reading one probe', () => {
  // Streams decoding every 10 ms; the prompt is sent at 35 and its first token arrives at 60.
  const streams = (tokenAt60: boolean): number[][] =>
    Array.from({ length: 3 }, () => [0, 10, 20, 30, 40, 50, ...(tokenAt60 ? [60, 70, 80, 90] : [70, 80, 90])]);

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
    expect(readSchedulingProbe(streams(true), 35, 60, 12, { stallMs: 12.2, decodeStepMs: 8 })).toMatchObject({ coincided: true, mixed: false });
    expect(readSchedulingProbe(streams(false), 35, 60, 12, { stallMs: 4.1, decodeStepMs: 8 })).toMatchObject({ coincided: false, mixed: true });
  });

  test("a stall neither scheduling explains (beyond the prompt's step by more than half a decode step) leaves the verdict to the client's reading", () => {
    // transformers without CUDA graphs: 213 ms against a 136 ms prompt step and a 120 ms decode step.
    expect(readSchedulingProbe(streams(true), 35, 60, 136, { stallMs: 213, decodeStepMs: 120 })).toMatchObject({ serverExplained: false, coincided: true, mixed: true });
    expect(readSchedulingProbe(streams(false), 35, 60, 136, { stallMs: 213, decodeStepMs: 120 })).toMatchObject({ serverExplained: false, coincided: false, mixed: false });
  });

  test('streams that ended before the prompt\'s first token cannot be read', () => {
    expect(readSchedulingProbe([[0, 10, 20, 30]], 35, 60, 10)).toBeNull();
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

  test('stalls that agree decide, whatever the client read; so does the majority when the client is split too', () => {
    expect(schedulingVerdict([probe(false, true), probe(false, true), probe(false, true)])).toEqual({ mixedChunk: false, clientDecided: false });
    expect(schedulingVerdict([probe(true, true), probe(false, false), probe(false, true)])).toEqual({ mixedChunk: false, clientDecided: false });
    // A probe whose stall neither scheduling explains is the client's vote already, not a split of the server's.
    expect(schedulingVerdict([probe(true, true), probe(true, true, false), probe(true, true)])).toEqual({ mixedChunk: true, clientDecided: false });
  });
});
