import type { RooflineProfile } from '../../src/types/engine.js';

/**
 * A small roofline profile for tests: steps of about 8 ms (a 2 ms overhead over a 6 ms weights floor), long enough that
 * a step apart stands out from a loaded machine's scheduling noise, with a KV pool no test fills. Made up, not
 * measured; `name` and `model` tell the tests' runs apart, `extra` adds or replaces keys (servingLatency, scheduling).
 */
export function eightMsProfile(name: string, extra: Partial<RooflineProfile> = {}): RooflineProfile {
  return {
    kind: 'roofline',
    name,
    description: 'test',
    model: `test/${name}`,
    hardware: 'none',
    derivation: [],
    coefficients: { stepOverheadMs: 2, weightsFloorMs: 6, prefillPerTokenMs: 0.01, prefillAttentionPerPairMs: 1e-6, decodePerSequenceMs: 0.05, kvReadPerTokenMs: 1e-5 },
    maxTotalTokens: 200_000,
    contextLength: 16_384,
    ...extra,
  };
}
