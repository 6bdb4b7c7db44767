import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimServer } from '../../src/engine/http/start-sim-server.js';
import { NodeTest } from '../../src/index.js';
import { noticesOf as notices, ttftsOf as ttfts } from '../helpers/run-outputs.js';
import type { RooflineProfile } from '../../src/types/engine.js';
import { eightMsProfile } from '../helpers/test-profiles.js';

let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-calibrated-twin-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

const BASE = eightMsProfile('calibrated-test', { servingLatency: { ingressMs: 0.5, deliveryMs: 1, networkMs: 0.5 } });

const SCHEDULING = { mixedChunk: true, chunkedPrefillSize: 512, maxRunningRequests: 16, maxTotalTokens: 60_000, source: 'server_info' } as const;

/** Enough load that batches pass 4 running requests and prompts are chunked. */
const WORKLOAD = { virtualTime: true, datasetName: 'random-ids', randomInputLen: 600, randomOutputLen: 40, randomRangeRatio: 0.5, numPrompts: 120, requestRate: 40, seed: 5, progress: 'off' } as const;

async function run(name: string, profile: RooflineProfile, extra: Record<string, unknown> = {}) {
  return new NodeTest({ ...WORKLOAD, ...extra, profile: JSON.stringify(profile), outputDir: join(workDirectory, name) }).run();
}


describe('a twin on a calibrated profile', () => {
  it("schedules as the profile's server did when the run names no scheduler flag, and names a flag that contradicts it", async () => {
    const byProfile = await run('by-profile', { ...BASE, scheduling: SCHEDULING });
    const byFlags = await run('by-flags', BASE, { enableMixedChunk: true, chunkedPrefillSize: 512, maxRunningRequests: 16, maxTotalTokens: 60_000 });
    const unmixed = await run('unmixed', BASE, { chunkedPrefillSize: 512, maxRunningRequests: 16, maxTotalTokens: 60_000 });
    expect(ttfts(byProfile)).toEqual(ttfts(byFlags));
    // The scheduling makes a difference here, so the equality above says the profile's was taken.
    expect(ttfts(unmixed)).not.toEqual(ttfts(byFlags));
    expect(notices(byProfile).some((notice) => notice.startsWith('scheduling:'))).toBe(false);

    const contradicted = await run('contradicted', { ...BASE, scheduling: SCHEDULING }, { enableMixedChunk: false, maxRunningRequests: 8 });
    const notice = notices(contradicted).find((line) => line.startsWith('scheduling:'));
    expect(notice).toMatch(/--enable-mixed-chunk is off but the profile's server mixes prefill chunks into decode steps/);
    expect(notice).toMatch(/--max-running-requests is 8 but the profile's server has 16/);
  });

  it('in real time too: the launched sim-server takes the profile\'s scheduling, and a contradicting flag is named', { timeout: 120_000 }, async () => {
    const settings = { datasetName: 'random-ids', randomInputLen: 200, randomOutputLen: 8, numPrompts: 6, requestRate: 20, seed: 5, progress: 'off' } as const;
    const profile = JSON.stringify({ ...BASE, scheduling: SCHEDULING });
    const contradicted = await new NodeTest({ ...settings, profile, enableMixedChunk: false, outputDir: join(workDirectory, 'real-time-contradicted') }).run();
    expect(notices(contradicted).find((line) => line.startsWith('scheduling:'))).toMatch(/--enable-mixed-chunk is off but the profile's server mixes/);
    const agreed = await new NodeTest({ ...settings, profile, outputDir: join(workDirectory, 'real-time-agreed') }).run();
    expect(notices(agreed).some((line) => line.startsWith('scheduling:'))).toBe(false);
  });

  it("a sim-server given only the profile schedules as the profile's server (its /server_info says so)", async () => {
    const server = await startSimServer({ profile: { ...BASE, scheduling: SCHEDULING } });
    try {
      const info = (await (await fetch(`${server.url}/server_info`)).json()) as Record<string, unknown>;
      expect(info).toMatchObject({ enable_mixed_chunk: true, chunked_prefill_size: 512, max_running_requests: 16, max_total_num_tokens: 60_000 });
    } finally {
      await server.close();
    }
  });

  it('counts the steps it simulates outside the region the profile was measured over, and says how far (notice, summary.json, report)', async () => {
    const region = { decodeSequences: [1, 4], prefillTokens: [64, 2048], kvTokens: [40, 3000], mixedSteps: null } satisfies RooflineProfile['region'];
    const result = await run('outside', { ...BASE, scheduling: SCHEDULING, region });
    const twinRegion = result.run.extras?.twinRegion as { totalSteps: number; outsideSteps: number; decodeSequences?: { largest: number; measuredMax: number; steps: number }; mixedDecodeSequences?: { measuredMax: number } };
    expect(twinRegion.outsideSteps).toBeGreaterThan(0);
    expect(twinRegion.outsideSteps).toBeLessThanOrEqual(twinRegion.totalSteps);
    expect(twinRegion.decodeSequences?.measuredMax).toBe(4);
    expect(twinRegion.decodeSequences?.largest).toBeGreaterThan(4);
    // Mixed steps were never measured, and this server mixes: every one counts.
    expect(twinRegion.mixedDecodeSequences?.measuredMax).toBe(0);
    const notice = notices(result).find((line) => line.includes('outside the region'));
    expect(notice).toMatch(new RegExp(`${twinRegion.outsideSteps} of ${twinRegion.totalSteps} steps .* outside the region profile calibrated-test was measured over \\(batch up to \\d+, measured to 4 \\(\\d+\\.\\d\\dx\\)`));
    expect(notice).toMatch(/mixed-step batch never measured/);
    const summary = JSON.parse(await readFile(join(result.outputDirectory ?? '', 'summary.json'), 'utf8')) as { extras?: { twinRegion?: unknown; notices?: string[] } };
    expect(summary.extras?.twinRegion).toEqual(twinRegion);
    const html = await readFile(join(result.outputDirectory ?? '', 'report.html'), 'utf8');
    expect(html).toContain('outside the region profile calibrated-test');

    const wide = { decodeSequences: [1, 64], prefillTokens: [16, 4096], kvTokens: [0, 100_000], mixedSteps: { decodeSequences: [1, 64], prefillTokens: [1, 4096] } } satisfies RooflineProfile['region'];
    const inside = await run('inside', { ...BASE, scheduling: SCHEDULING, region: wide });
    expect((inside.run.extras?.twinRegion as { outsideSteps: number }).outsideSteps).toBe(0);
    expect(notices(inside).some((line) => line.includes('outside the region'))).toBe(false);
  });
});
