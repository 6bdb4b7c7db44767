import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { decodeObservation, mixedObservation, prefillObservation } from '../../src/engine/calibration/fit-profile.js';
import { buildMeasuredTable, mixingExcess, predictFromTable } from '../../src/engine/calibration/measured-table-fit.js';
import { startSimServer } from '../../src/engine/http/start-sim-server.js';
import { costModelFor } from '../../src/engine/profile/cost-model.js';
import { loadProfile } from '../../src/engine/profile/load-profile.js';
import { interpolateStepMs } from '../../src/engine/profile/measured-table.js';
import { ServelabError } from '../../src/errors/servelab-error.js';
import type { MeasuredProfile, MeasuredStepTable } from '../../src/types/engine.js';

/** Made up for these tests: step = 10 + 2 x batch + 0.001 x KV + 0.01 x prefill tokens (ms), exact on the grid. */
const TABLE: MeasuredStepTable = {
  decodeSequences: [0, 1, 8],
  prefillTokens: [0, 512],
  kvTokens: [0, 1000, 4000],
  stepMs: [0, 1, 8].map((batch) => [0, 512].map((prefill) => [0, 1000, 4000].map((kv) => 10 + 2 * batch + 0.001 * kv + 0.01 * prefill))),
};

function profile(table: MeasuredStepTable = TABLE): MeasuredProfile {
  return {
    kind: 'measured',
    name: 'test-table',
    description: 'made up for tests',
    model: 'test/model',
    hardware: 'none',
    derivation: [],
    table,
    maxTotalTokens: 65_536,
    contextLength: 8192,
  };
}

describe('measured profile: loading', () => {
  test('loads from an object, inline JSON and a file like any profile', () => {
    expect(loadProfile(profile()).kind).toBe('measured');
    expect(loadProfile(JSON.stringify(profile())).kind).toBe('measured');
    const directory = mkdtempSync(join(tmpdir(), 'servelab-measured-'));
    const path = join(directory, 'table.json');
    writeFileSync(path, JSON.stringify(profile()));
    const loaded = loadProfile(path);
    expect(loaded.kind === 'measured' && loaded.table.stepMs[2]?.[1]?.[2]).toBeCloseTo(10 + 16 + 4 + 5.12, 9);
  });

  test.each([
    ['an axis that is not increasing', { ...TABLE, kvTokens: [0, 4000, 1000] }, /kvTokens must be strictly increasing/],
    ['a grid of the wrong shape', { ...TABLE, stepMs: TABLE.stepMs.slice(0, 2) }, /stepMs must be 3 x 2 x 3/],
    ['a row of the wrong length', { ...TABLE, stepMs: [TABLE.stepMs[0], TABLE.stepMs[1], [[1, 2, 3], [1, 2]]] }, /stepMs must be 3 x 2 x 3/],
    ['a negative step time', { ...TABLE, stepMs: TABLE.stepMs.map((plane) => plane.map((row) => row.map(() => -1))) }, /stepMs/],
    ['an empty axis', { ...TABLE, prefillTokens: [] }, /prefillTokens/],
  ])('refuses %s, naming the problem', (_name, table, message) => {
    let error: unknown;
    try {
      loadProfile(profile(table as MeasuredStepTable));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ServelabError);
    expect((error as ServelabError).code).toBe('INVALID_PROFILE');
    expect((error as Error).message).toMatch(message);
  });
});

describe('measured profile: interpolation', () => {
  const exact = (batch: number, prefill: number, kv: number): number => 10 + 2 * batch + 0.001 * kv + 0.01 * prefill;

  test('is exact on grid points and linear between them', () => {
    expect(interpolateStepMs(TABLE, 8, 512, 4000)).toBeCloseTo(exact(8, 512, 4000), 9);
    expect(interpolateStepMs(TABLE, 0, 0, 0)).toBeCloseTo(10, 9);
    // Every axis of the made-up table is linear, so multilinear interpolation is exact anywhere inside it.
    expect(interpolateStepMs(TABLE, 4.5, 200, 2500)).toBeCloseTo(exact(4.5, 200, 2500), 9);
  });

  test('past the last point follows the last segment; below the first it is held', () => {
    expect(interpolateStepMs(TABLE, 16, 0, 0)).toBeCloseTo(exact(16, 0, 0), 9);
    expect(interpolateStepMs(TABLE, 1, 2048, 8000)).toBeCloseTo(exact(1, 2048, 8000), 9);
    const curved: MeasuredStepTable = { decodeSequences: [1, 2], prefillTokens: [0], kvTokens: [100], stepMs: [[[5]], [[7]]] };
    expect(interpolateStepMs(curved, 0, 0, 0)).toBe(5);
    expect(interpolateStepMs(curved, 4, 0, 0)).toBe(11);
  });

  test('the cost model reads a measured profile through the same entry point as the others', () => {
    const model = costModelFor(profile());
    expect(model.stepDurationMs({ prefillTokens: 0, prefillAttentionPairs: 0, decodeSequences: 8, decodeKvTokens: 4000 })).toBeCloseTo(exact(8, 0, 4000), 9);
  });

  test('a sim-server runs on a measured profile', async () => {
    const server = await startSimServer({ profile: profile() });
    try {
      const response = await fetch(`${server.url}/generate`, {
        method: 'POST',
        body: JSON.stringify({ input_ids: Array.from({ length: 64 }, (_u, i) => i + 10), sampling_params: { max_new_tokens: 4, ignore_eos: true } }),
      });
      const body = (await response.json()) as { meta_info: { completion_tokens: number } };
      expect(body.meta_info.completion_tokens).toBe(4);
    } finally {
      await server.close();
    }
  });
});

describe('measured profile: past its points, the fitted form', () => {
  // The fitted form of the same calibration: 1 ms fixed, 4 ms a sequence, 0.002 ms a KV token, 0.01 ms a prompt token.
  const fallback = { stepOverheadMs: 1, weightsFloorMs: 0, prefillPerTokenMs: 0.01, prefillAttentionPerPairMs: 0, decodePerSequenceMs: 4, kvReadPerTokenMs: 0.002 };
  const work = (decodeSequences: number, decodeKvTokens: number, prefillTokens = 0) => ({ decodeSequences, decodeKvTokens, prefillTokens, prefillAttentionPairs: 0 });

  test('a step past the last batch size is the table at its edge plus what the fitted form adds from the edge, and is counted', () => {
    const model = costModelFor({ ...profile(), fallback }) as ReturnType<typeof costModelFor> & { fallbackSteps: number };
    // Batch 8 (the edge) at 2000 KV: 10 + 16 + 2 = 28; batch 32 adds 24 sequences x 4 ms by the fitted form.
    expect(model.stepDurationMs(work(32, 2000))).toBeCloseTo(28 + 24 * 4, 9);
    // KV past the axis (4000) and prompt tokens past it (512): each part from the fitted form.
    expect(model.stepDurationMs(work(8, 6000, 1024))).toBeCloseTo(10 + 16 + 4 + 0.01 * 512 + 2000 * 0.002 + 512 * 0.01, 9);
    // Inside the table, the table alone.
    expect(model.stepDurationMs(work(4, 2000))).toBeCloseTo(10 + 8 + 2, 9);
    expect(model.fallbackSteps).toBe(2);
  });

  test('without a fitted form (tables written before there was one) the last segment is carried on, as before', () => {
    expect(costModelFor(profile()).stepDurationMs(work(32, 2000))).toBeCloseTo(10 + 64 + 2, 9);
  });
});

describe('measured profile: built from calibration observations', () => {
  const prefillMs = (tokens: number): number => 30 + 0.04 * tokens;
  const decodeMs = (batch: number, kv: number): number => 30 + 0.2 * batch + 0.0005 * kv;
  const observations = [
    ...[64, 256, 1024].map((tokens) => prefillObservation(tokens, prefillMs(tokens))),
    ...[1, 4, 16].flatMap((batch) => [40, 520].map((perSequence) => decodeObservation(batch, perSequence, decodeMs(batch, batch * perSequence)))),
  ];

  test('passes through every observation and predicts steps between them', () => {
    const table = buildMeasuredTable(observations)!;
    for (const observation of observations) expect(predictFromTable(table, observation)).toBeCloseTo(observation.stepMs, 6);
    // Batch 8 was not measured: the table interpolates between batch 4 and 16 (exact here, both axes being linear).
    expect(interpolateStepMs(table, 8, 0, 8 * 300)).toBeCloseTo(decodeMs(8, 8 * 300), 1);
    // A mixed step pays the fixed cost once: decode part + prefill part - the fixed cost.
    expect(interpolateStepMs(table, 4, 256, 4 * 40)).toBeCloseTo(decodeMs(4, 160) + prefillMs(256) - 30, 6);
  });

  test('past a batch size\'s last KV point a step follows its mean KV slope, not a jump that happens to come last', () => {
    // Shaped like transformers' continuous batching on an H100 (2026-11-23, bench/real-engine/results/
    // 2026-11-23-four-lengths/dense-kv-calibration): at batch 64 a decode step is flat up to 16,384 KV tokens, then
    // steps up with each 16,384-token bucket its attention pads to; the densest points sit at the last jump.
    const bucketMs = (kv: number): number => 42 + 25 * (Math.ceil(kv / 16_384) - 1);
    const stepped = [
      prefillObservation(64, 36),
      prefillObservation(1024, 70),
      ...[51, 150, 230, 470, 546].map((perSequence) => decodeObservation(64, perSequence, bucketMs(64 * perSequence))),
    ];
    const table = buildMeasuredTable(stepped)!;
    // Mean slope from the first point (3,264 KV tokens, 42 ms) to the last (34,944, 92 ms): about 1.58 ms per 1,000.
    const meanPerToken = (92 - 42) / (34_944 - 3_264);
    for (const kv of [40_000, 60_000, 90_000]) {
      const expected = 92 + meanPerToken * (kv - 34_944);
      expect(interpolateStepMs(table, 64, 0, kv), `${kv} KV tokens`).toBeCloseTo(expected, 6);
    }
    // The last segment (30,080 to 34,944 tokens: 67 to 92 ms) carried on would have priced 60,000 tokens at 221 ms.
    expect(interpolateStepMs(table, 64, 0, 60_000)).toBeLessThan(140);
  });

  test('without decode steps there is no table', () => {
    expect(buildMeasuredTable(observations.filter((o) => o.kind === 'prefill'))).toBeNull();
  });

  test('measured mixed steps correct the mixed cells: what mixing costs beyond the sum of its parts', () => {
    // Made up: each prefill token of a mixed step costs 2e-6 ms more per KV token of the decoding batch (an engine whose
    // attention runs every query of the step over the whole batch's KV). Eight points measured (each batch size at a
    // short and a long prompt, as the sweep measures them), one unseen checked.
    const excessMs = (prefill: number, kv: number): number => 2e-6 * prefill * kv;
    const mixedMs = (batch: number, kv: number, prefill: number): number => decodeMs(batch, kv) + prefillMs(prefill) - 30 + excessMs(prefill, kv);
    const mixed = [
      [4, 160, 256],
      [4, 2080, 256],
      [16, 640, 256],
      [16, 4800, 256],
      [4, 160, 1024],
      [4, 2080, 1024],
      [16, 640, 1024],
      [16, 4800, 1024],
    ].map(([batch, kv, prefill]) => mixedObservation(batch as number, kv as number, prefill as number, mixedMs(batch as number, kv as number, prefill as number)));
    const table = buildMeasuredTable([...observations, ...mixed])!;
    for (const observation of mixed) expect(predictFromTable(table, observation)).toBeCloseTo(observation.stepMs, 3);
    const unseen = mixedObservation(8, 1500, 512, mixedMs(8, 1500, 512));
    expect(predictFromTable(table, unseen)).toBeCloseTo(unseen.stepMs, 3);
    // Without them the same step is priced as the sum of its parts, too cheap by the excess.
    const partsOnly = buildMeasuredTable(observations)!;
    expect(unseen.stepMs - predictFromTable(partsOnly, unseen)).toBeCloseTo(excessMs(512, 1500), 3);
  });

  test('a mixed step is never priced below its decode part or its prefill part alone', () => {
    // An engine that mixes for free (a mixed step costs what its larger part costs) fits a negative excess; the cells
    // stay at or above each part.
    const free = [
      [4, 160, 256],
      [16, 4800, 256],
      [16, 4800, 1024],
    ].map(([batch, kv, prefill]) =>
      mixedObservation(batch as number, kv as number, prefill as number, Math.max(decodeMs(batch as number, kv as number), prefillMs(prefill as number))),
    );
    const table = buildMeasuredTable([...observations, ...free])!;
    for (const batch of table.decodeSequences.slice(1)) {
      for (const kv of table.kvTokens) {
        for (const prefill of table.prefillTokens) {
          const step = interpolateStepMs(table, batch, prefill, kv);
          expect(step).toBeGreaterThanOrEqual(interpolateStepMs(table, batch, 0, kv) - 1e-9);
          expect(step).toBeGreaterThanOrEqual(interpolateStepMs(table, 0, prefill, 0) - 1e-9);
        }
      }
    }
  });

  test('the mixing excess may be negative, and is held flat past the measured KV sizes', () => {
    // Mixing that costs 2 ms less than the parts at 1000 KV tokens and 6 ms less at 3000 (one prompt size, one batch).
    const excess = mixingExcess(
      [mixedObservation(4, 1000, 512, 8), mixedObservation(4, 3000, 512, 4)],
      () => 10,
    )!;
    expect(excess(4, 512, 2000)).toBeCloseTo(-4, 9);
    expect(excess(4, 512, 500)).toBeCloseTo(-2, 9);
    expect(excess(4, 512, 9000)).toBeCloseTo(-6, 9);
    expect(excess(4, 256, 2000)).toBeCloseTo(-2, 9);
  });

  test('the mixing excess follows the batch: linear between the batch sizes measured, held past the largest, shrinking to none', () => {
    // 2 ms beyond the parts beside a batch of 4, 8 ms beside 16, whatever the KV (one prompt size).
    const excess = mixingExcess(
      [mixedObservation(4, 1000, 512, 12), mixedObservation(16, 1000, 512, 18)],
      () => 10,
    )!;
    expect(excess(10, 512, 1000)).toBeCloseTo(5, 9);
    expect(excess(16, 512, 4000)).toBeCloseTo(8, 9);
    expect(excess(32, 512, 1000)).toBeCloseTo(8, 9);
    expect(excess(2, 512, 1000)).toBeCloseTo(1, 9);
    expect(excess(10, 256, 1000)).toBeCloseTo(2.5, 9);
  });
});
