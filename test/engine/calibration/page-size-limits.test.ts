import { describe, expect, test } from 'vitest';
import { calibrateProfile } from '../../../src/engine/calibration/calibrate-profile.js';
import { readLimits } from '../../../src/engine/calibration/calibration-client.js';
import { schedulingOf } from '../../../src/engine/calibration/identify-scheduling.js';
import { resolveEngineSetup } from '../../../src/engine/create-engine.js';
import { startSimServer } from '../../../src/engine/http/start-sim-server.js';
import { eightMsProfile } from '../../helpers/test-profiles.js';

const PROFILE = eightMsProfile('paged');

describe("calibration reads the server's page size and the twin schedules in it", () => {
  test('a sim-server with page size 16: limits and profile carry 16, and the twin built from the profile runs in pages of 16', async () => {
    const server = await startSimServer({ profile: PROFILE, pageSize: 16, maxRunningRequests: 48, chunkedPrefillSize: 1024, maxTotalTokens: 150_000 });
    let profile;
    try {
      expect((await readLimits(server.url)).pageSize).toBe(16);
      const result = await calibrateProfile({ url: server.url, repeats: 1, decodeTokens: 6, promptLengths: [64, 512], batchSizes: [4], concurrencyPromptLengths: [32], mixedSweep: false });
      expect(result.measurements.limits.pageSize).toBe(16);
      expect(result.measurements.scheduling?.pageSize).toBe(16);
      profile = result.profile;
    } finally {
      await server.close();
    }
    expect(profile.scheduling?.pageSize).toBe(16);
    expect(resolveEngineSetup({ profile }).config.pageSize).toBe(16);
    // A run's own setting wins over the profile's, as for every other limit.
    expect(resolveEngineSetup({ profile, pageSize: 1 }).config.pageSize).toBe(1);
    const twin = await startSimServer({ profile });
    try {
      const info = (await (await fetch(`${twin.url}/server_info`)).json()) as Record<string, unknown>;
      expect(info['page_size']).toBe(16);
    } finally {
      await twin.close();
    }
  });

  test("a server whose info names no page size gives a scheduling without one: the twin takes SGLang's default, 1", () => {
    const limits = { modelPath: 'm', maxRunningRequests: 8, chunkedPrefillSize: 512, contextLength: 4096, maxTotalTokens: 20_000 };
    const identified = { mixedChunk: false, samples: [], evidence: 'test' };
    const scheduling = schedulingOf(limits, identified);
    expect(scheduling).not.toHaveProperty('pageSize');
    expect(resolveEngineSetup({ profile: { ...PROFILE, scheduling } }).config.pageSize).toBe(1);
    expect(schedulingOf({ ...limits, pageSize: 32 }, identified).pageSize).toBe(32);
  });
});
