import { describe, expect, test } from 'vitest';
import { loadProfile } from '../../../src/engine/profile/load-profile.js';
import { PATH_QUANTILES, PathDraws, quantilesOf, servingLatencyFromSamples, valueAt } from '../../../src/engine/profile/path-distribution.js';
import { ServelabError } from '../../../src/errors/servelab-error.js';
import type { RooflineProfile, ServingPathDistribution } from '../../../src/types/engine.js';

/** A path with a tail, as a loaded host gives one: 1 ms mostly, one request in ten 4-20 ms. */
const TAILED: ServingPathDistribution = {
  quantiles: [...PATH_QUANTILES],
  ingressMs: [0.01, 0.01, 0.02, 0.02, 0.03, 0.03, 0.05],
  deliveryMs: [0.8, 0.9, 1, 1.3, 4, 8, 20],
  ingressSamples: 16,
  deliverySamples: 400,
};

describe('the serving path as a distribution', () => {
  test('reads quantiles off samples and values back off quantiles, held past the first and last', () => {
    const samples = Array.from({ length: 101 }, (_, index) => index / 10);
    expect(quantilesOf(samples, [0, 0.1, 0.5, 0.99])).toEqual([0, 1, 5, 9.9]);
    expect(quantilesOf([])).toBeNull();
    expect(valueAt(TAILED.quantiles, TAILED.deliveryMs, 0.5)).toBe(1);
    expect(valueAt(TAILED.quantiles, TAILED.deliveryMs, 0.925)).toBeCloseTo(6, 9);
    expect(valueAt(TAILED.quantiles, TAILED.deliveryMs, 0.01)).toBe(0.8);
    expect(valueAt(TAILED.quantiles, TAILED.deliveryMs, 0.999)).toBe(20);
  });

  test('draws each request\'s delivery from the quantiles, the same for one seed, and the constant without them', () => {
    const draws = (seed: number): number[] => {
      const path = new PathDraws(seed);
      return Array.from({ length: 4000 }, () => path.deliveryMs(2.27, TAILED));
    };
    const drawn = draws(7);
    expect(draws(7)).toEqual(drawn);
    expect(draws(8)).not.toEqual(drawn);
    const measured = quantilesOf(drawn, [0.5, 0.9, 0.99]) as number[];
    expect(measured[0]).toBeCloseTo(1, 1);
    expect(measured[1]).toBeGreaterThan(3.5);
    expect(measured[1]).toBeLessThan(4.5);
    expect(measured[2]).toBeGreaterThan(15);
    expect(new PathDraws(7).deliveryMs(2.27, undefined)).toBe(2.27);
  });

  test('keeps the medians as the constants and the quantiles, once enough requests were timed', () => {
    const deliveryMs = Array.from({ length: 40 }, (_, index) => (index % 10 === 9 ? 12 : 1.5));
    const latency = servingLatencyFromSamples([0.02, 0.03, 0.02, 0.04], deliveryMs);
    expect(latency.ingressMs).toBeCloseTo(0.025, 9);
    expect(latency.deliveryMs).toBeCloseTo(1.5, 9);
    expect(latency.distribution?.deliverySamples).toBe(40);
    expect(latency.distribution?.deliveryMs[PATH_QUANTILES.indexOf(0.95)]).toBe(12);
    // Too few requests for a tail: the constants alone, as before.
    expect(servingLatencyFromSamples([0.02], deliveryMs.slice(0, 10)).distribution).toBeUndefined();
  });

  test('a profile loads with the distribution or without it (older profiles), and refuses a malformed one', () => {
    const profile: RooflineProfile = {
      kind: 'roofline',
      name: 'path-test',
      description: 'made up for tests',
      model: 'test/model',
      hardware: 'none',
      derivation: [],
      coefficients: { stepOverheadMs: 1, weightsFloorMs: 8, prefillPerTokenMs: 0.04, prefillAttentionPerPairMs: 0, decodePerSequenceMs: 0.05, kvReadPerTokenMs: 0.0001 },
      maxTotalTokens: 65_536,
      contextLength: 8192,
    };
    const withPath = loadProfile({ ...profile, servingLatency: { ingressMs: 0.02, deliveryMs: 2.27, distribution: TAILED } });
    expect(withPath.kind !== 'simple' && withPath.servingLatency?.distribution?.deliveryMs).toEqual(TAILED.deliveryMs);
    const old = loadProfile({ ...profile, servingLatency: { ingressMs: 0.02, deliveryMs: 2.27 } });
    expect(old.kind !== 'simple' && old.servingLatency?.distribution).toBeUndefined();
    for (const distribution of [
      { ...TAILED, deliveryMs: [...TAILED.deliveryMs].reverse() },
      { ...TAILED, ingressMs: [0.01] },
      { ...TAILED, quantiles: [0.5, 0.1, 0.25, 0.75, 0.9, 0.95, 0.99] },
    ]) {
      expect(() => loadProfile(JSON.stringify({ ...profile, servingLatency: { ingressMs: 0.02, deliveryMs: 2.27, distribution } }))).toThrow(ServelabError);
    }
  });
});
