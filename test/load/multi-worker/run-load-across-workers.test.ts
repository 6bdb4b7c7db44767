import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock/clock.js';
import { createProtocolClient } from '../../../src/clients/registry.js';
import { startSimServer } from '../../../src/engine/index.js';
import { isServelabError } from '../../../src/errors/servelab-error.js';
import { runLoadAcrossWorkers } from '../../../src/load/multi-worker/run-load-across-workers.js';
import type { LoadProgress, LoadResult, ProtocolClientSpec } from '../../../src/types/load.js';
import type { RequestRecord } from '../../../src/types/record.js';
import { SeededRandom } from '../../../src/utils/random.js';
import { createArrivalSchedule } from '../../../src/workload/arrivals/arrival-registry.js';
import { loadOptions, startLoadTarget, withoutMeasuredTimes, wordWorkload, type LoadTarget } from '../helpers/load-fixtures.js';

// These tests start worker threads from the built copy in dist/ (`npm test` builds first; else `npx tsc -p tsconfig.build.json`).

/** The t0 of a multi-worker run: a whole epoch millisecond, so it is recovered exactly from `startTime`. */
function originEpochMs(result: LoadResult): number {
  return Math.round(result.startTime * 1000);
}

describe('runLoadAcrossWorkers', () => {
  let target: LoadTarget;
  let clientSpec: ProtocolClientSpec;

  beforeAll(async () => {
    target = await startLoadTarget();
    clientSpec = target.clientSpec;
  });

  afterAll(async () => {
    await target.server.close();
  });

  it('gives records identical in content to the single-worker path, scheduled exactly at t0 + offset, with summed progress', async () => {
    const requests = wordWorkload(48, (index) => 2 + (index % 4));
    const offsetsMs = createArrivalSchedule({ process: 'poisson', requestRate: 300 }, requests.length, new SeededRandom(7));
    const warmupRequests = wordWorkload(2, () => 2);
    const singleStartMs = Math.ceil(systemClock.nowEpochSeconds() * 1000 + 100);
    const single = await runLoadAcrossWorkers({
      ...loadOptions(clientSpec, requests, offsetsMs),
      workers: 1,
      warmupRequests,
      requestIdPrefix: 'same-',
      startAtEpochMs: singleStartMs,
    });
    const progress: LoadProgress[] = [];
    const multi = await runLoadAcrossWorkers({
      ...loadOptions(clientSpec, requests, offsetsMs),
      workers: 2,
      warmupRequests,
      requestIdPrefix: 'same-',
      onProgress: (snapshot) => progress.push(snapshot),
    });

    expect(multi.interrupted).toBe(false);
    expect(multi.records.map((record) => record.requestId)).toEqual(requests.map((_, index) => `same-${index}`));
    expect(multi.records.every((record) => record.success)).toBe(true);
    expect(multi.records.map(withoutMeasuredTimes)).toEqual(single.records.map(withoutMeasuredTimes));
    expect(multi.records.map((record) => record.actualOutputTokens)).toEqual(requests.map((request) => request.outputLength));
    // Same offsets from the same kind of origin: the scheduled times are exact, not merely close.
    const t0Ms = originEpochMs(multi);
    expect(multi.records.map((record) => record.scheduledTime)).toEqual(Array.from(offsetsMs, (offsetMs) => (t0Ms + offsetMs) / 1000));
    expect(single.records.map((record) => record.scheduledTime)).toEqual(Array.from(offsetsMs, (offsetMs) => (singleStartMs + offsetMs) / 1000));
    expect(multi.endTime).toBeGreaterThanOrEqual(Math.max(...multi.records.map((record) => record.finishTime as number)));

    // Warmup: once, in the calling thread, before t0, never among the records.
    expect(multi.warmupRecords.map((record) => record.requestId)).toEqual(['same-warmup-0', 'same-warmup-1']);
    expect(multi.warmupRecords.every((record) => record.success && record.warmup)).toBe(true);
    expect(Math.max(...multi.warmupRecords.map((record) => record.finishTime as number))).toBeLessThan(multi.startTime);

    const last = progress[progress.length - 1] as LoadProgress;
    expect(last).toMatchObject({ phase: 'done', total: 48, sent: 48, completed: 48, failed: 0, inFlight: 0 });
    expect(progress.filter((snapshot) => snapshot.phase === 'done')).toHaveLength(1);
  });

  it('starts every worker from the shared instant: each first request is scheduled at t0 + its offset and never sent early', async () => {
    const requests = wordWorkload(12, () => 2);
    // Offsets 40 ms apart, the first at 25 ms: worker 0's first request is index 0, worker 1's is index 1.
    const offsetsMs = Float64Array.from(requests, (_, index) => 25 + index * 40);
    // A worker thread's performance.now() counts from the thread's start, this thread's from the process's: a worker that
    // read t0 on its own scale would send later by at least this process's age when the workers started.
    const processAgeAtStartMs = performance.now();
    const result = await runLoadAcrossWorkers({ ...loadOptions(clientSpec, requests, offsetsMs), workers: 2 });
    const t0Ms = originEpochMs(result);
    for (const index of [0, 1]) {
      const record = result.records[index] as RequestRecord;
      expect(record.scheduledTime).toBe((t0Ms + (offsetsMs[index] as number)) / 1000);
      const lagMs = ((record.dispatchTime as number) - record.scheduledTime) * 1000;
      expect(lagMs).toBeGreaterThanOrEqual(-0.01);
      expect(lagMs).toBeLessThan(processAgeAtStartMs);
    }
    for (const record of result.records) expect(record.dispatchTime as number).toBeGreaterThanOrEqual(record.scheduledTime - 1e-5);
  });

  it('runs the workers side by side: both halves of the workload are sent over the same stretch of time', async () => {
    const requests = wordWorkload(40, () => 30);
    const offsetsMs = createArrivalSchedule({ process: 'constant', requestRate: 400 }, requests.length, new SeededRandom(1));
    const result = await runLoadAcrossWorkers({ ...loadOptions(clientSpec, requests, offsetsMs), workers: 2 });
    expect(result.records).toHaveLength(40);
    const arrivals = (parity: number): number[] =>
      result.records.filter((_, index) => index % 2 === parity).map((record) => record.arrivalTime as number);
    const even = arrivals(0);
    const odd = arrivals(1);
    // Interleaved, not one after the other: each worker starts before the other one finishes sending.
    expect(Math.min(...odd)).toBeLessThan(Math.max(...even));
    expect(Math.min(...even)).toBeLessThan(Math.max(...odd));
    // And requests of the two workers are in flight at once.
    const overlapping = result.records.some(
      (first, index) =>
        index % 2 === 0 &&
        result.records.some(
          (second, other) =>
            other % 2 === 1 && (second.arrivalTime as number) < (first.finishTime as number) && (first.arrivalTime as number) < (second.finishTime as number),
        ),
    );
    expect(overlapping).toBe(true);
  });

  it('stops every worker on abort and still returns the merged records, in-flight requests recorded as aborted', async () => {
    // A slow server: each request streams for about 10 s. The schedule spans 1.5 s; the run is aborted about 200 ms
    // after t0, long before any request could finish and before the schedule ends, however busy the machine.
    const slowServer = await startSimServer({ profile: { kind: 'simple', stepMs: 10 }, maxRunningRequests: 64 });
    const requests = wordWorkload(30, () => 1000);
    const offsetsMs = Float64Array.from(requests, (_, index) => index * 50);
    const controller = new AbortController();
    let abortedAtMs = Number.NaN;
    const run = runLoadAcrossWorkers({
      ...loadOptions({ protocol: 'sglang', options: { ...clientSpec.options, baseUrl: slowServer.url } }, requests, offsetsMs),
      workers: 2,
      signal: controller.signal,
      startLeadMs: 100,
      onProgress: (progress) => {
        if (progress.phase === 'measured' && progress.elapsedMs >= 200 && !controller.signal.aborted) {
          abortedAtMs = systemClock.nowMs();
          controller.abort();
        }
      },
    });
    const result = await run.finally(() => slowServer.close());
    expect(result.interrupted).toBe(true);
    expect(abortedAtMs).not.toBeNaN();
    // Cut short: each request ended before its own stream could have (1,000 tokens of 10 ms steps on the model).
    // (A request the abort caught before it was sent has no arrival: nothing to time.)
    const sent = result.records.filter((record) => record.arrivalTime !== undefined);
    expect(sent.length).toBeGreaterThan(0);
    for (const record of sent) expect((record.finishTime as number) - (record.arrivalTime as number)).toBeLessThan(1000 * 0.01);
    expect(result.records.length).toBeGreaterThanOrEqual(4);
    expect(result.records.length).toBeLessThan(30);
    // Both workers' records, in workload order, every one of them cut short.
    expect(result.records.map((record) => record.datasetIndex)).toEqual(result.records.map((_, index) => index));
    expect(result.records.some((record) => record.datasetIndex % 2 === 1)).toBe(true);
    expect(result.records.every((record) => !record.success && record.error === 'aborted')).toBe(true);
  });

  it('returns at once, interrupted and empty, when the run is aborted before the workers start', async () => {
    const progress: LoadProgress[] = [];
    const result = await runLoadAcrossWorkers({
      ...loadOptions(clientSpec, wordWorkload(6, () => 2), new Float64Array(6)),
      workers: 2,
      warmupRequests: wordWorkload(1, () => 2),
      signal: AbortSignal.abort(),
      onProgress: (snapshot) => progress.push(snapshot),
    });
    expect(result).toMatchObject({ records: [], warmupRecords: [], interrupted: true });
    // Worker start-up can outlast a progress tick (a 'warmup' snapshot then), but the run never enters its measured
    // phase and ends with one 'done'.
    const phases = progress.map((snapshot) => snapshot.phase);
    expect(phases.at(-1)).toBe('done');
    expect(phases.filter((phase) => phase !== 'warmup')).toEqual(['done']);
  });

  it('turns a crashed worker into an error naming it, and stops the others instead of hanging', async () => {
    const crashingClient = fileURLToPath(new URL('./fixtures/crashing-client.mjs', import.meta.url));
    const requests = wordWorkload(8, () => 2);
    const startedMs = systemClock.nowMs();
    const error = await runLoadAcrossWorkers({
      ...loadOptions({ protocol: crashingClient, options: clientSpec.options }, requests, new Float64Array(8)),
      workers: 2,
      requestIdPrefix: 'crash-',
      startLeadMs: 50,
    }).catch((caught: unknown) => caught);
    expect(isServelabError(error)).toBe(true);
    // Request 3 belongs to worker 1 (3 % 2); the other worker's requests would have waited ten seconds.
    expect((error as Error).message).toMatch(/load worker 1 of 2 crashed: simulated crash in the client/);
    // Ended before any of the other requests' 10 s timers could fire (crashing-client.mjs): a bound set by the fixture,
    // not by how fast this machine is.
    expect(systemClock.nowMs() - startedMs).toBeLessThan(10_000);
  });

  it('reports a worker that cannot build its client, and rejects a closed loop over several workers before starting any', async () => {
    const error = await runLoadAcrossWorkers({
      ...loadOptions({ protocol: './no-such-protocol-module.mjs', options: clientSpec.options }, wordWorkload(4, () => 2), new Float64Array(4)),
      workers: 2,
    }).catch((caught: unknown) => caught);
    expect(isServelabError(error) && error.code).toBe('MODULE_LOAD_FAILED');
    expect((error as Error).message).toMatch(/^load worker [01] of 2: protocol "\.\/no-such-protocol-module\.mjs"/);

    const closed = runLoadAcrossWorkers({ ...loadOptions(clientSpec, wordWorkload(4, () => 2), new Float64Array(4)), workers: 2, mode: { kind: 'closed', concurrency: 4 } });
    await expect(closed).rejects.toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringMatching(/closed loop .* set client workers to 1/) });
  });

  it('with one worker runs in this thread through the given client', async () => {
    const client = createProtocolClient('sglang', { ...clientSpec.options, clock: systemClock });
    try {
      const requests = wordWorkload(6, () => 2);
      const result = await runLoadAcrossWorkers({
        ...loadOptions({ protocol: 'no-such-protocol', options: clientSpec.options }, requests, new Float64Array(6)),
        workers: 1,
        client,
        requestIdPrefix: 'one-',
      });
      // The spec's protocol does not exist: only the given client could have sent these.
      expect(result.records.map((record) => [record.requestId, record.success])).toEqual(requests.map((_, index) => [`one-${index}`, true]));
    } finally {
      await client.close();
    }
  });
});
