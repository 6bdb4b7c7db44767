import { describe, expect, test } from 'vitest';
import { calibrateProfile } from '../../src/engine/calibration/calibrate-profile.js';
import { decodeObservation, fitRooflineProfile, predictStepMs, prefillObservation } from '../../src/engine/calibration/fit-profile.js';
import { startSimServer } from '../../src/engine/http/start-sim-server.js';
import type { RooflineCoefficients, RooflineProfile } from '../../src/types/engine.js';

/** A fast profile (a few ms per step) whose steps leave the floor within the sweeps' range. */
const KNOWN: RooflineCoefficients = {
  stepOverheadMs: 0.5,
  weightsFloorMs: 2,
  prefillPerTokenMs: 0.004,
  prefillAttentionPerPairMs: 2e-6,
  decodePerSequenceMs: 0.02,
  kvReadPerTokenMs: 2e-5,
};

const KNOWN_PROFILE: RooflineProfile = {
  kind: 'roofline',
  name: 'known',
  description: 'test',
  model: 'test/known-model',
  hardware: 'none',
  derivation: [],
  coefficients: KNOWN,
  maxTotalTokens: 500_000,
  contextLength: 32_768,
};

function expectWithin(actual: number, expected: number, fraction: number, name: string): void {
  expect(Math.abs(actual - expected) / expected, `${name}: ${actual} vs ${expected}`).toBeLessThanOrEqual(fraction);
}

describe('profile fitting', () => {
  test('exact synthetic steps give back the coefficients', () => {
    const observations = [64, 256, 1024, 4096].map((length) => prefillObservation(length, 0));
    for (const batch of [1, 64, 128, 256]) for (const kv of [40, 520]) observations.push(decodeObservation(batch, kv, 0));
    for (const observation of observations) observation.stepMs = predictStepMs(KNOWN, observation);
    const fit = fitRooflineProfile(observations)!;
    for (const key of Object.keys(KNOWN) as (keyof RooflineCoefficients)[]) expectWithin(fit.coefficients[key], KNOWN[key], 1e-6, key);
    expect(fit.rmsErrorPercent).toBeLessThan(1e-6);
  });

  test('noise shows up as fit error', () => {
    const observations = [256, 1024, 2048, 4096].map((length) => prefillObservation(length, 0));
    for (const batch of [1, 128, 256]) for (const kv of [40, 520]) observations.push(decodeObservation(batch, kv, 0));
    observations.forEach((observation, index) => {
      observation.stepMs = predictStepMs(KNOWN, observation) * (index % 2 === 0 ? 1.05 : 0.95);
    });
    expect(fitRooflineProfile(observations)!.rmsErrorPercent).toBeGreaterThan(1);
  });
});

describe('calibrating a sim-server with a known profile', () => {
  test('recovers every coefficient within 5%', async () => {
    const server = await startSimServer({ profile: KNOWN_PROFILE, maxRunningRequests: 256, chunkedPrefillSize: 8192 });
    try {
      const result = await calibrateProfile({ url: server.url, repeats: 1, decodeTokens: 12, batchSizes: [16, 64, 128, 256], promptLengths: [64, 512, 1024, 2048, 4096] });
      expect(result.measurements.usedServerTimestamps).toBe(true);
      const fitted = result.profile.coefficients;
      const table = result.fit.predictions.map(({ observation, predictedMs }) => `${observation.label}: ${observation.stepMs.toFixed(3)} (fit ${predictedMs.toFixed(3)})`).join('; ');
      for (const key of Object.keys(KNOWN) as (keyof RooflineCoefficients)[]) {
        expect(Math.abs(fitted[key] - KNOWN[key]) / KNOWN[key], `${key}: ${fitted[key]} vs ${KNOWN[key]}; ${table}`).toBeLessThanOrEqual(0.05);
      }
      expect(result.fit.rmsErrorPercent).toBeLessThan(5);
      expect(result.profile.maxTotalTokens).toBe(500_000);
      expect(result.profile.model).toBe('test/known-model');
    } finally {
      await server.close();
    }
  });
});

describe('profile fitting with partial data', () => {
  test('without decode steps above the floor, prefill steps still give the overhead and floor', () => {
    const observations = [64, 512, 1024, 2048].map((length) => prefillObservation(length, 0));
    for (const batch of [1, 8, 32]) observations.push(decodeObservation(batch, 40, 0));
    for (const observation of observations) observation.stepMs = predictStepMs(KNOWN, observation);
    const fit = fitRooflineProfile(observations)!;
    expectWithin(fit.coefficients.stepOverheadMs, KNOWN.stepOverheadMs, 1e-6, 'stepOverheadMs');
    expectWithin(fit.coefficients.weightsFloorMs, KNOWN.weightsFloorMs, 1e-6, 'weightsFloorMs');
    expect(fit.coefficients.decodePerSequenceMs).toBe(0);
  });
});
