import { describe, expect, it } from 'vitest';
import { forecastValidationSeconds } from '../../../src/experiments/validate-profiles.js';
import { batchPointTokens, forecastCalibrationMs, type CalibrationPlan, type ProbeCosts } from '../../../src/engine/calibration/sweep-plan.js';

const PROBE: ProbeCosts = { prefillMs: 7, prefillPerTokenMs: 0.02, decodeStepMs: 7, requestOverheadMs: 3, flushMs: 1 };
const EMPTY: CalibrationPlan = { decodeTokens: 16, repeats: 2, chunkLimit: 2048, promptLengths: [], concurrencyPoints: [], mixedPoints: [], schedulingPromptTokens: null };

describe("calibrate's duration forecast", () => {
  it('batch-1 sweep: per repeat and length, a flush, the round trip, the prefill and 15 decode steps at batch 1', () => {
    const forecast = forecastCalibrationMs(PROBE, { ...EMPTY, promptLengths: [64, 1024] });
    // 64 tokens: 7 + 0.02 x 48; 1024: 7 + 0.02 x 1008. Decode: 15 x 7 x (1 + 1/128).
    const decodeMs = 15 * 7 * (1 + 1 / 128);
    const expected = 2 * (2 * (1 + 3 + decodeMs) + (7 + 0.02 * 48) + (7 + 0.02 * 1008));
    expect(forecast.batchOneMs).toBeCloseTo(expected, 9);
    expect(forecast.totalMs).toBeCloseTo(expected, 9);
  });

  it("a batch point's prefill runs in chunk-sized steps, each with the step's fixed part, and the point runs twice per repeat", () => {
    const batch = 32;
    const promptTokens = 512;
    const forecast = forecastCalibrationMs(PROBE, { ...EMPTY, repeats: 1, concurrencyPoints: [{ promptTokens, batch }] });
    const { shortTokens, extraTokens } = batchPointTokens(batch, promptTokens, 2048, 16);
    // 16,384 prompt tokens in 8 chunks of 2048: 8 x 7 ms + 0.02 x (16384 - 8 x 16).
    const prefillMs = 8 * 7 + 0.02 * (16_384 - 128);
    const stepMs = 7 * (1 + batch / 128);
    const run = (tokens: number): number => 1 + 3 + prefillMs + (tokens - 1) * stepMs;
    expect(forecast.concurrencyMs).toBeCloseTo(run(shortTokens) + run(shortTokens + extraTokens), 9);
  });

  it('mixed steps and the scheduling probe count their prefills, round trips and flushes', () => {
    const point = { batch: 7, promptTokens: 32, probeTokens: 512, runTokens: 33 };
    const forecast = forecastCalibrationMs(PROBE, { ...EMPTY, repeats: 3, mixedPoints: [point], schedulingPromptTokens: 1024 });
    const batchRun = 1 + 3 + (7 + 0.02 * (224 - 16)) + 32 * 7 * (1 + 7 / 128);
    expect(forecast.mixedMs).toBeCloseTo(3 * (batchRun + 3 + (7 + 0.02 * (512 - 16))), 9);
    // Four streams of 32-token prompts, 40 tokens each, beside each of three probes of 1024 tokens.
    const streams = 3 + (7 + 0.02 * (128 - 16)) + 39 * 7 * (1 + 4 / 128);
    expect(forecast.schedulingMs).toBeCloseTo(3 * (streams + 3 + (7 + 0.02 * 1008) + 6 * 7 * (1 + 4 / 128)), 9);
    expect(forecast.totalMs).toBeCloseTo(forecast.mixedMs + forecast.schedulingMs, 9);
  });
});

describe("calibrate's validation forecast", () => {
  it('before the rates are known: secondsPerRate of arrivals per rate, a real run each, the twin runs', () => {
    // Two rates of 15 s, two real runs at 3 s, two profiles x (a 400-request capacity burst + 400 requests a rate) at 7 ms a request.
    expect(forecastValidationSeconds()).toBe(Math.round(30 + 6 + 2 * (400 + 800) * 0.007));
  });

  it('with the predicted capacity, a slow server sends its 40 prompts at a low rate for longer than secondsPerRate', () => {
    // Capacity 2 req/s: 0.4 req/s x 15 s would be 6 prompts, raised to 40 (100 s); 1.6 req/s x 15 s = 24, raised to 40 (25 s).
    expect(forecastValidationSeconds({ predictedCapacity: 2, profiles: 1 })).toBe(Math.round(100 + 25 + 6 + (400 + 80) * 0.007));
    // A fast server: 1200 prompts at most, so 0.8 x 200 = 160 req/s sends for 7.5 s, not 15 (0.2 x 200 = 40 req/s: 600 prompts).
    expect(forecastValidationSeconds({ predictedCapacity: 200, profiles: 1 })).toBe(Math.round(15 + 1200 / 160 + 6 + (400 + 600 + 1200) * 0.007));
  });
});
