import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simServerArgs } from '../../src/cluster/launchers/sim/launch-sim-server.js';
import { sglangServerArgs } from '../../src/cluster/launchers/sglang/sglang-server-args.js';
import { NodeTest } from '../../src/index.js';
import { noticesOf as notices, ttftsOf as ttfts } from '../helpers/run-outputs.js';
import type { RooflineProfile } from '../../src/types/engine.js';
import { eightMsProfile } from '../helpers/test-profiles.js';

let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-page-size-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

const BASE = eightMsProfile('paged-test');

/** Chunked prompts (256-token chunks) from several requests at once, so where a chunk is cut shows in TTFT. */
const WORKLOAD = { virtualTime: true, datasetName: 'random-ids', randomInputLen: 600, randomOutputLen: 20, randomRangeRatio: 0.5, numPrompts: 60, requestRate: 40, seed: 3, chunkedPrefillSize: 256, progress: 'off' } as const;

async function run(name: string, profile: RooflineProfile, extra: Record<string, unknown> = {}) {
  return new NodeTest({ ...WORKLOAD, ...extra, profile: JSON.stringify(profile), outputDir: join(workDirectory, name) }).run();
}


describe('the page size of a node test on the simulated engine', () => {
  it("reaches the twin from --page-size or from the calibrated profile's scheduling, and a contradicting flag is named", async () => {
    const byFlag = await run('by-flag', BASE, { pageSize: 64 });
    const unpaged = await run('unpaged', BASE);
    // Chunks cut to whole pages and KV in pages change the schedule, so the equality below says the profile's was taken.
    expect(ttfts(byFlag)).not.toEqual(ttfts(unpaged));
    const scheduling = { mixedChunk: false, chunkedPrefillSize: 256, maxRunningRequests: 256, maxTotalTokens: 200_000, pageSize: 64, source: 'server_info' } as const;
    const byProfile = await run('by-profile', { ...BASE, scheduling });
    expect(ttfts(byProfile)).toEqual(ttfts(byFlag));
    expect(notices(byProfile).some((notice) => notice.startsWith('scheduling:'))).toBe(false);
    const contradicted = await run('contradicted', { ...BASE, scheduling }, { pageSize: 1 });
    expect(notices(contradicted).find((line) => line.startsWith('scheduling:'))).toMatch(/--page-size is 1 but the profile's server has 64/);
  });

  it('is passed on to a launched sim-server and to real SGLang as --page-size, only when set', () => {
    expect(simServerArgs({ name: 's', pageSize: 16 }).join(' ')).toContain('--page-size 16');
    expect(simServerArgs({ name: 's' })).not.toContain('--page-size');
    expect(sglangServerArgs({ modelPath: 'm', port: 1, pageSize: 32 }).join(' ')).toContain('--page-size 32');
    expect(sglangServerArgs({ modelPath: 'm', port: 1 })).not.toContain('--page-size');
  });

  it('is a setting of a test configuration, refused below 1 with the flag named', () => {
    expect(new NodeTest({ ...WORKLOAD, pageSize: 16, outputDir: join(workDirectory, 'accepted') }).config.pageSize).toBe(16);
    expect(() => new NodeTest({ ...WORKLOAD, pageSize: 0, outputDir: join(workDirectory, 'refused') })).toThrow(/pageSize \(--page-size\): Too small/);
  });
});
