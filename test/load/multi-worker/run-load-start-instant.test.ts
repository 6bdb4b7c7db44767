import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock/clock.js';
import { createProtocolClient } from '../../../src/clients/registry.js';
import { startSimServer } from '../../../src/engine/index.js';
import type { RunningSimServer } from '../../../src/engine/index.js';
import { runLoad } from '../../../src/load/run-load.js';
import type { ProtocolClient } from '../../../src/types/client.js';
import type { WorkloadRequest } from '../../../src/types/workload.js';

/** runLoad's options for offering part of a workload from a given start instant (what each load worker uses). */
describe('runLoad with startAtEpochMs and requestIndices', () => {
  let server: RunningSimServer;
  let client: ProtocolClient;
  const requests: WorkloadRequest[] = [4, 9, 11].map((datasetIndex) => ({ datasetIndex, prompt: 'one two three', inputLength: 3, outputLength: 2 }));

  beforeAll(async () => {
    server = await startSimServer({ profile: { kind: 'simple', stepMs: 1 } });
    client = createProtocolClient('sglang', { baseUrl: server.url, stream: true, sampling: { temperature: 0, ignoreEos: true }, clock: systemClock });
  });

  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it('waits for the given epoch origin, schedules exactly from it and names requests by their global index', async () => {
    const startAtEpochMs = systemClock.nowEpochSeconds() * 1000 + 400;
    const offsetsMs = Float64Array.from([0, 10.25, 20.5]);
    const elapsed: number[] = [];
    const result = await runLoad({
      requests,
      warmupRequests: [],
      arrivalOffsetsMs: offsetsMs,
      requestIndices: [4, 9, 11],
      requestIdPrefix: 'part-',
      startAtEpochMs,
      client,
      clock: systemClock,
      onProgress: (progress) => elapsed.push(progress.elapsedMs),
    });
    expect(result.startTime).toBe(startAtEpochMs / 1000);
    expect(result.records.map((record) => record.requestId)).toEqual(['part-4', 'part-9', 'part-11']);
    expect(result.records.map((record) => record.scheduledTime)).toEqual(Array.from(offsetsMs, (offsetMs) => (startAtEpochMs + offsetMs) / 1000));
    for (const record of result.records) expect(record.dispatchTime as number).toBeGreaterThanOrEqual(record.scheduledTime - 1e-5);
    // Progress before the origin counts up to it from below: t0 = now - elapsed holds throughout.
    expect(elapsed[0]).toBeLessThan(0);
  });

  it('sends at once the requests whose instants an origin in the past has already passed', async () => {
    const startAtEpochMs = systemClock.nowEpochSeconds() * 1000 - 5000;
    const result = await runLoad({
      requests,
      warmupRequests: [],
      arrivalOffsetsMs: Float64Array.from([0, 1, 2]),
      startAtEpochMs,
      client,
      clock: systemClock,
    });
    expect(result.records.map((record) => record.scheduledTime)).toEqual([0, 1, 2].map((offsetMs) => (startAtEpochMs + offsetMs) / 1000));
    for (const record of result.records) expect(((record.dispatchTime as number) - record.scheduledTime) * 1000).toBeGreaterThan(4900);
  });

  it('starts a closed loop at the given origin too', async () => {
    const startAtEpochMs = systemClock.nowEpochSeconds() * 1000 + 120;
    const result = await runLoad({
      requests,
      warmupRequests: [],
      arrivalOffsetsMs: new Float64Array(3),
      mode: { kind: 'closed', concurrency: 1 },
      startAtEpochMs,
      client,
      clock: systemClock,
    });
    expect(result.records).toHaveLength(3);
    expect(Math.min(...result.records.map((record) => record.dispatchTime as number))).toBeGreaterThanOrEqual(startAtEpochMs / 1000 - 1e-5);
  });

  it('rejects requestIndices of the wrong length', async () => {
    await expect(
      runLoad({ requests, warmupRequests: [], arrivalOffsetsMs: new Float64Array(3), requestIndices: [1], client, clock: systemClock }),
    ).rejects.toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringMatching(/requestIndices has 1 entries for 3 requests/) });
  });
});
