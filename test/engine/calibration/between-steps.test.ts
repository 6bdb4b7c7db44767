import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { betweenStepsMs } from '../../../src/engine/calibration/answer-timings.js';
import { betweenSteps, withBetweenSteps } from '../../../src/engine/calibration/between-steps.js';
import { calibrateProfile } from '../../../src/engine/calibration/calibrate-profile.js';
import { decodeObservation, mixedObservation, prefillObservation } from '../../../src/engine/calibration/fit-profile.js';
import type { CalibrationMeasurements } from '../../../src/engine/calibration/measure-server.js';
import { tableStepMs } from '../../../src/engine/profile/measured-table.js';

describe('the time between steps beside a mixed probe', () => {
  // Streams decoding in 9.7 ms steps with 0.3 ms between them; the probe's step (stamped 20 ms) ends at 130.6 ms.
  const stream = (offsetMs: number): number[] => [80.3, 90.3, 100.3, 110.3, 130.6, 140.6, 150.6].map((time) => time + offsetMs);

  it("is the streams' interval across the probe's step less that step (median over streams)", () => {
    const ms = betweenStepsMs([stream(0), stream(0.05), stream(-0.05)], 130.62, 20);
    expect(ms).toBeCloseTo(0.3, 6);
  });

  it('spans every step of a probe whose prompt took two (chunked): still one stretch between steps', () => {
    // The probe's stamps cover two steps of 15 ms and the 0.3 ms between them: 30.3 ms, ending at 141.2 ms.
    const streamOverTwo = [80.3, 90.3, 100.3, 110.3, 125.6, 140.9, 150.9, 160.9];
    expect(betweenStepsMs([streamOverTwo], 140.92, 30.3)).toBeCloseTo(0.3, 6);
  });

  it("is not read where no stream's token came with the probe's first, nor from an interval that held another step", () => {
    // The probe ran apart from the streams (a server that does not mix): their tokens are a decode step away from it.
    expect(betweenStepsMs([[80, 90, 100, 110, 142, 152]], 131, 20)).toBeUndefined();
    // A token with the probe's, but the stretch before it holds a stall as long as a step.
    expect(betweenStepsMs([[80.3, 90.3, 100.3, 110.3, 140.6, 150.6]], 140.6, 20)).toBeUndefined();
    expect(betweenStepsMs([stream(0)], 130.6, Number.NaN)).toBeUndefined();
  });
});

describe('prefill and mixed steps charged the time between steps', () => {
  const observations = [
    prefillObservation(256, 20),
    decodeObservation(4, 300, 10),
    { ...mixedObservation(4, 1200, 256, 25), betweenStepsMs: 0.2 },
    { ...mixedObservation(8, 2400, 256, 30), betweenStepsMs: 0.4 },
    { ...mixedObservation(8, 2400, 64, 28), betweenStepsMs: -0.1 },
  ];

  it('takes the median reading, and adds it to prefill and mixed steps (and their samples), not to decode steps', () => {
    const between = betweenSteps(observations);
    expect(between).toEqual({ ms: 0.2, probes: 3 });
    const charged = withBetweenSteps([...observations, { ...prefillObservation(512, 30), samplesMs: [29, 31] }], between);
    expect(charged.map((observation) => observation.stepMs)).toEqual([20.2, 10, 25.2, 30.2, 28.2, 30.2]);
    expect(charged.at(-1)?.samplesMs).toEqual([29.2, 31.2]);
    expect(betweenSteps([decodeObservation(4, 300, 10)])).toBeNull();
    expect(betweenSteps([{ ...mixedObservation(4, 1200, 256, 25), betweenStepsMs: -0.3 }])).toEqual({ ms: 0, probes: 1 });
  });

  it("are fitted so by calibrate on a mixing server, and not on one that runs prefill apart", async () => {
    // transformers' continuous batching on an H100 (2026-11-23), with a between-step reading given to its mixed probes.
    const fixture = JSON.parse(readFileSync(new URL('../../fixtures/calibration/transformers-cb-h100-20261123-measurements.json', import.meta.url), 'utf8')) as CalibrationMeasurements;
    const withReadings: CalibrationMeasurements = {
      ...fixture,
      observations: fixture.observations.map((observation) => (observation.kind === 'mixed' ? { ...observation, betweenStepsMs: 1.5 } : observation)),
    };
    const scheduling = { mixedChunk: true, chunkedPrefillSize: fixture.limits.chunkedPrefillSize, maxRunningRequests: fixture.limits.maxRunningRequests, maxTotalTokens: fixture.limits.maxTotalTokens, source: 'server_info' } as const;
    const mixing = await calibrateProfile({ url: 'fixture', measurements: { ...withReadings, scheduling } });
    const apart = await calibrateProfile({ url: 'fixture', measurements: { ...withReadings, scheduling: { ...scheduling, mixedChunk: false } } });
    const prefill = fixture.observations.find((observation) => observation.kind === 'prefill')!;
    const priced = (result: typeof mixing): number => tableStepMs(result.measuredProfile!.table, 0, prefill.size, 0, result.measuredProfile!.fallback);
    expect(priced(mixing) - priced(apart)).toBeCloseTo(1.5, 6);
    expect(mixing.measuredProfile!.derivation.join(' ')).toContain("Prefill and mixed steps carry the engine's time between steps, 1.500 ms (median beside");
    expect(apart.measuredProfile!.derivation.join(' ')).toContain('No time between steps was read: the server runs prefill apart from decoding');
    // The observations calibrate fitted (and printed its errors against) are the charged ones.
    expect(mixing.observations.find((observation) => observation.kind === 'prefill')!.stepMs).toBeCloseTo(prefill.stepMs + 1.5, 9);
  });
});
