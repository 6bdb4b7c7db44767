import { describe, expect, it } from 'vitest';
import { loadProfile } from '../../src/engine/profile/load-profile.js';
import { metricVerdict, runNoise, validationVerdict } from '../../src/experiments/validation-noise.js';
import type { ProfileValidation, RooflineProfile } from '../../src/types/engine.js';
import type { IntervalEstimate, MetricPrecision, Summary } from '../../src/types/summary.js';

function interval(estimate: number, low: number | null, high: number | null): IntervalEstimate {
  return { estimate, low, high, method: low === null ? 'none' : 'bootstrap-requests', runs: 1, requests: 137, resamples: low === null ? null : 2000 };
}

function metric(p50: IntervalEstimate, p90: IntervalEstimate): MetricPrecision {
  return { values: 137, p99DecidedByTop: 2, p50, p90, p99: interval(p90.estimate, null, null) };
}

/**
 * A real run as summary.precision states it (only what the noise reads): TTFT p90 0.200 s within [0.160, 0.2274] s
 * (-20% / +13.7%: a GPU run of 137 requests had about +-13.7%), TPOT p50 within 1%, E2E with p90's interval missing.
 */
const REAL = {
  precision: {
    confidence: 0.95,
    resamples: 2000,
    seed: 20240527,
    metrics: {
      ttftSeconds: metric(interval(0.1, 0.093, 0.105), interval(0.2, 0.16, 0.2274)),
      tpotSeconds: metric(interval(0.02, 0.0198, 0.0202), interval(0.025, 0.024, 0.026)),
      totalLatencySeconds: metric(interval(1, 0.97, 1.04), interval(1.5, null, null)),
    },
  },
} as unknown as Summary;

describe('the real run’s own noise', () => {
  it('reads each latency percentile’s 95% interval as percent of its estimate; none for throughput or a missing interval', () => {
    const ttftP90 = runNoise(REAL, 'ttftP90');
    expect(ttftP90?.low).toBe(0.16);
    expect(ttftP90?.high).toBe(0.2274);
    expect(ttftP90?.lowPercent).toBeCloseTo(-20, 9);
    expect(ttftP90?.highPercent).toBeCloseTo(13.7, 9);
    expect(runNoise(REAL, 'tpotP50')?.highPercent).toBeCloseTo(1, 9);
    expect(runNoise(REAL, 'throughput')).toBeUndefined();
    expect(runNoise(REAL, 'e2eP90')).toBeUndefined();
    expect(runNoise({} as Summary, 'ttftP50')).toBeUndefined();
  });

  it('calls a figure outside the target within noise only where the twin lies inside the real run’s interval', () => {
    const ttftP90 = runNoise(REAL, 'ttftP90');
    // Within the target, whatever the noise.
    expect(validationVerdict(-14.9, 0.1702, ttftP90)).toBe('within target');
    // -18.8% (0.1624 s) lies inside [0.160, 0.2274]; +18% (0.236 s) does not.
    expect(validationVerdict(-18.8, 0.1624, ttftP90)).toBe('within noise');
    expect(validationVerdict(18, 0.236, ttftP90)).toBe('miss');
    expect(validationVerdict(-21, 0.158, ttftP90)).toBe('miss');
    // The interval's ends belong to it.
    expect(validationVerdict(-20, 0.16, ttftP90)).toBe('within noise');
    // TPOT p50's interval is +-1%: 18.8% off is a miss there.
    expect(validationVerdict(-18.8, 0.01624, runNoise(REAL, 'tpotP50'))).toBe('miss');
    // Without an interval (throughput), outside the target is a miss.
    expect(validationVerdict(-16, 8.4, runNoise(REAL, 'throughput'))).toBe('miss');
    // A metric one side lacks (NaN) is a miss.
    expect(validationVerdict(Number.NaN, Number.NaN, ttftP90)).toBe('miss');
  });

  it('keeps the interval in the profile rounded, and nothing where there is none', () => {
    expect(metricVerdict('within noise', runNoise(REAL, 'ttftP90'))).toEqual({ verdict: 'within noise', noiseLowPercent: -20, noiseHighPercent: 13.7 });
    expect(metricVerdict('miss', undefined)).toEqual({ verdict: 'miss' });
  });
});

describe('a profile’s validation with verdicts', () => {
  const base: RooflineProfile = {
    kind: 'roofline',
    name: 'p',
    description: 'test',
    model: 'm',
    hardware: 'h',
    derivation: [],
    coefficients: { stepOverheadMs: 5, weightsFloorMs: 30, prefillPerTokenMs: 0.06, prefillAttentionPerPairMs: 3e-6, decodePerSequenceMs: 0.5, kvReadPerTokenMs: 1e-4 },
    maxTotalTokens: 60_000,
    contextLength: 8192,
  };
  const errors = { requestRate: 1.3, throughputErrorPercent: 1, ttftP50ErrorPercent: -3, ttftP90ErrorPercent: -18.8, tpotP50ErrorPercent: 0.4, e2eP50ErrorPercent: -2, e2eP90ErrorPercent: -5 };
  const within = { verdict: 'within target' } as const;

  it('loads, and so does one written before verdicts', () => {
    const withVerdicts: ProfileValidation = {
      description: 'test',
      worstErrorPercent: 18.8,
      rates: [{ ...errors, verdicts: { throughput: within, ttftP50: within, ttftP90: { verdict: 'within noise', noiseLowPercent: -9.1, noiseHighPercent: 13.7 }, tpotP50: within, e2eP50: within, e2eP90: within } }],
    };
    expect((loadProfile({ ...base, validation: withVerdicts }) as RooflineProfile).validation?.rates[0]?.verdicts?.ttftP90.verdict).toBe('within noise');
    expect((loadProfile({ ...base, validation: { description: 'old', worstErrorPercent: 18.8, rates: [errors] } }) as RooflineProfile).validation?.rates[0]?.verdicts).toBeUndefined();
  });

  it('refuses an unknown verdict', () => {
    const bad = { description: 'test', worstErrorPercent: 18.8, rates: [{ ...errors, verdicts: { throughput: { verdict: 'close enough' } } }] };
    expect(() => loadProfile({ ...base, validation: bad } as unknown as RooflineProfile)).toThrow(/validation\.rates\.0\.verdicts/);
  });
});
