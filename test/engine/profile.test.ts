import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { costModelFor, RooflineCostModel } from '../../src/engine/profile/cost-model.js';
import { builtinProfileNames, loadProfile } from '../../src/engine/profile/load-profile.js';
import { isServelabError } from '../../src/errors/servelab-error.js';
import { resolveEngineSetup } from '../../src/engine/create-engine.js';
import { sglangGpuMemoryDefaults } from '../../src/engine/profile/sglang-gpu-memory.js';

function expectProfileError(source: string, pattern: RegExp): void {
  try {
    loadProfile(source);
  } catch (error) {
    expect(isServelabError(error) && error.code).toBe('INVALID_PROFILE');
    expect((error as Error).message).toMatch(pattern);
    return;
  }
  throw new Error(`loadProfile(${source}) did not fail`);
}

describe('profiles', () => {
  test('the Llama-3-8B H100 profile matches its derivation', () => {
    const profile = loadProfile('llama-3-8b-h100');
    expect(profile.kind).toBe('roofline');
    if (profile.kind !== 'roofline') return;
    // The dense decode step at 1 token measured on an H100 (bench/real-engine/results/gpu-bench.json): 5.70 ms.
    expect(profile.coefficients.weightsFloorMs).toBeCloseTo(5.70, 2);
    expect(profile.kvBytesPerToken).toBe(32 * 8 * 128 * 2 * 2);
    // Measured dense prefill: 20.4-20.7 us per token.
    expect(profile.coefficients.prefillPerTokenMs).toBeCloseTo(0.021, 3);
    expect(profile.derivation.length).toBeGreaterThan(3);
    const model = costModelFor(profile);
    // Batch-1 decode sits on the weights floor: overhead + floor = the published SGLang batch-1 step, about 7 ms.
    expect(model.stepDurationMs({ prefillTokens: 0, prefillAttentionPairs: 0, decodeSequences: 1, decodeKvTokens: 500 })).toBeCloseTo(7.0, 6);
    // A 2048-token prefill is compute bound: 1.3 + 2048 x 0.021 + attention.
    const pairs = 2048 * (2048 + 1) / 2;
    expect(model.stepDurationMs({ prefillTokens: 2048, prefillAttentionPairs: pairs, decodeSequences: 0, decodeKvTokens: 0 })).toBeCloseTo(
      1.3 + 2048 * 0.021 + pairs * 1.1e-6,
      6,
    );
  });

  test('every built-in profile loads and carries a derivation', () => {
    const names = builtinProfileNames();
    expect(names).toEqual(expect.arrayContaining(['llama-3-8b-h100', 'llama-3-70b-h100-tp8', 'llama-3.2-1b-l4']));
    for (const name of names) {
      const profile = loadProfile(name);
      expect(profile.kind).toBe('roofline');
      if (profile.kind === 'roofline') {
        expect(profile.name).toBe(name);
        expect(profile.derivation.join(' ')).toMatch(/weightsFloorMs/);
      }
    }
  });

  test('the 70B TP8 floor is its per-GPU weight shard over one GPU\'s bandwidth; the 1B L4 floor is memory bound', () => {
    const big = loadProfile('llama-3-70b-h100-tp8');
    const small = loadProfile('llama-3.2-1b-l4');
    if (big.kind !== 'roofline' || small.kind !== 'roofline') throw new Error('expected roofline profiles');
    expect(big.coefficients.weightsFloorMs).toBeCloseTo(141.1e9 / 8 / 3.35e12 * 1000, 1);
    expect(big.kvBytesPerToken).toBe(80 * 8 * 128 * 2 * 2);
    expect(small.coefficients.weightsFloorMs).toBeCloseTo(2.47e9 / 300e9 * 1000, 1);
    expect(small.kvBytesPerToken).toBe(16 * 8 * 64 * 2 * 2);
  });

  test('the simple kind makes every step exactly stepMs', () => {
    const model = costModelFor(loadProfile('{"kind":"simple","stepMs":10}'));
    expect(model.stepDurationMs({ prefillTokens: 5000, prefillAttentionPairs: 1e9, decodeSequences: 0, decodeKvTokens: 0 })).toBe(10);
    expect(model.stepDurationMs({ prefillTokens: 0, prefillAttentionPairs: 0, decodeSequences: 3, decodeKvTokens: 30 })).toBe(10);
  });

  test('the roofline bound: large decode batches grow past the weights floor', () => {
    const model = new RooflineCostModel({
      stepOverheadMs: 1,
      weightsFloorMs: 5,
      prefillPerTokenMs: 0,
      prefillAttentionPerPairMs: 0,
      decodePerSequenceMs: 0.05,
      kvReadPerTokenMs: 0.0001,
    });
    expect(model.stepDurationMs({ prefillTokens: 0, prefillAttentionPairs: 0, decodeSequences: 10, decodeKvTokens: 1000 })).toBe(6);
    expect(model.stepDurationMs({ prefillTokens: 0, prefillAttentionPairs: 0, decodeSequences: 200, decodeKvTokens: 100_000 })).toBeCloseTo(21, 9);
  });

  test('a profile file path loads; problems are INVALID_PROFILE with a way out', () => {
    const directory = mkdtempSync(join(tmpdir(), 'servelab-profile-'));
    const good = join(directory, 'good.json');
    writeFileSync(good, JSON.stringify({ kind: 'simple', stepMs: 3 }));
    expect(loadProfile(good)).toEqual({ kind: 'simple', stepMs: 3 });
    const broken = join(directory, 'broken.json');
    writeFileSync(broken, '{"kind": "simple", ');
    expectProfileError(broken, /not valid JSON/);
    const wrong = join(directory, 'wrong.json');
    writeFileSync(wrong, JSON.stringify({ kind: 'simple', stepMs: -1 }));
    expectProfileError(wrong, /stepMs/);
    expectProfileError(join(directory, 'missing.json'), /cannot read profile file/);
    expectProfileError('no-such-profile', /unknown profile "no-such-profile": use one of .*llama-3-8b-h100/);
    expectProfileError('{"kind":"roofline"}', /not a valid profile/);
  });
});

describe('built-in profiles use SGLang\'s automatic memory settings (server_args.py _handle_gpu_memory_settings)', () => {
  test('the formula gives ≈ 0.83 on an 80 GB H100, chunk 8192 there, 2048 below 35 GiB, 16384 from 160 GiB', () => {
    expect(sglangGpuMemoryDefaults(81559)).toEqual({ chunkedPrefillSize: 8192, cudaGraphMaxBatchSize: 256, memFractionStatic: 0.835 });
    expect(sglangGpuMemoryDefaults(23034).chunkedPrefillSize).toBe(2048);
    expect(sglangGpuMemoryDefaults(143771).chunkedPrefillSize).toBe(8192);
    expect(sglangGpuMemoryDefaults(183359).chunkedPrefillSize).toBe(16384);
  });

  test.each(builtinProfileNames())('%s: its derivation states the automatic values, and the sim uses that chunk size', (name) => {
    const profile = loadProfile(name);
    if (profile.kind !== 'roofline') return;
    expect(profile.gpuMemoryMiB, `${name} names its GPU memory`).toBeDefined();
    const defaults = sglangGpuMemoryDefaults(profile.gpuMemoryMiB!, profile.tpSize ?? 1);
    const text = profile.derivation.join('\n');
    expect(text).toContain(`mem_fraction_static = (${profile.gpuMemoryMiB}`);
    expect(text).toContain(`= ${defaults.memFractionStatic}`);
    expect(text).toContain(`chunked_prefill_size ${defaults.chunkedPrefillSize}`);
    expect(resolveEngineSetup({ profile: name }).config.chunkedPrefillSize).toBe(defaults.chunkedPrefillSize);
  });
});
