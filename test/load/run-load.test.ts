import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Clock } from '../../src/clock/clock.js';
import type { ClientRequest, ProtocolClient } from '../../src/types/client.js';
import type { LoadProgress } from '../../src/types/load.js';
import type { ClientOutcome } from '../../src/types/record.js';
import type { WorkloadRequest } from '../../src/types/workload.js';
import { runLoad } from '../../src/load/run-load.js';
import { createArrivalSchedule } from '../../src/workload/arrivals/arrival-registry.js';
import { SeededRandom } from '../../src/utils/random.js';
import { driveFakeTime, fakeTimeClock, useFakeTime, useRealTime } from '../helpers/fake-time.js';

// Every run here is on fake time (test/helpers/fake-time.ts): instants and durations are exact, whatever the machine's load.
beforeEach(useFakeTime);
afterEach(useRealTime);
const fakeClock = fakeTimeClock();
/** runLoad, with fake time driven until it resolves. */
const run = (options: Parameters<typeof runLoad>[0]): ReturnType<typeof runLoad> => driveFakeTime(runLoad(options));

interface SendLog {
  requestId: string;
  sentMs: number;
  finishedMs?: number;
}

/**
 * A test double of the ProtocolClient interface: it notes when each request was handed to it (on the fake clock),
 * answers after a fixed time, and honours the abort signal as real clients do.
 */
class RecordingClient implements ProtocolClient {
  readonly protocol = 'recording';
  readonly log: SendLog[] = [];
  inFlight = 0;
  maxInFlight = 0;
  #durationMs: (request: ClientRequest) => number;
  #onSend: ((request: ClientRequest) => void) | undefined;

  readonly clock: Clock = fakeTimeClock();

  constructor(durationMs: number | ((request: ClientRequest) => number), onSend?: (request: ClientRequest) => void) {
    this.#durationMs = typeof durationMs === 'number' ? () => durationMs : durationMs;
    this.#onSend = onSend;
  }

  send(request: ClientRequest): Promise<ClientOutcome> {
    const sentMs = this.clock.nowMs();
    const entry: SendLog = { requestId: request.requestId, sentMs };
    this.log.push(entry);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    this.#onSend?.(request);
    return new Promise((resolve) => {
      const finish = (outcome: ClientOutcome): void => {
        clearTimeout(timer);
        request.signal?.removeEventListener('abort', onAbort);
        this.inFlight--;
        entry.finishedMs = this.clock.nowMs();
        resolve(outcome);
      };
      const onAbort = (): void => finish({ success: false, error: 'aborted', arrivalTime: this.clock.toEpochSeconds(sentMs) });
      const timer = setTimeout(
        () =>
          finish({
            success: true,
            arrivalTime: this.clock.toEpochSeconds(sentMs),
            firstTokenTime: this.clock.nowEpochSeconds(),
            finishTime: this.clock.nowEpochSeconds(),
          }),
        this.#durationMs(request),
      );
      request.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

function workload(count: number, start = 0): WorkloadRequest[] {
  return Array.from({ length: count }, (_, index) => ({
    datasetIndex: start + index,
    prompt: `prompt ${index}`,
    inputLength: 10 + index,
    outputLength: 5 + index,
    prefixGroup: index % 3,
    sessionId: `session-${index % 2}`,
  }));
}

describe('runLoad (open loop)', () => {
  it('sends each request at its absolute instant and keeps workload facts in the records', async () => {
    const count = 60;
    const offsetsMs = Float64Array.from({ length: count }, (_, index) => index * 5);
    const client = new RecordingClient(40);
    const result = await run({ requests: workload(count), warmupRequests: [], arrivalOffsetsMs: offsetsMs, client, clock: fakeClock, requestIdPrefix: 'r-' });
    expect(result.interrupted).toBe(false);
    expect(result.records).toHaveLength(count);
    const t0Ms = result.startTime * 1000 - fakeClock.toEpochSeconds(0) * 1000;
    const lagsMs = client.log.map((entry, index) => entry.sentMs - (t0Ms + (offsetsMs[index] as number)));
    // On fake time every instant is met exactly: none early, none late. (How late the real timer thread wakes on a
    // real machine is a figure of bench/load-precision.ts, not a test.)
    expect(lagsMs).toEqual(new Array<number>(count).fill(0));
    result.records.forEach((record, index) => {
      expect(record.requestId).toBe(`r-${index}`);
      expect(record.warmup).toBe(false);
      expect(record.datasetIndex).toBe(index);
      expect(record.inputLength).toBe(10 + index);
      expect(record.expectedOutputLength).toBe(5 + index);
      expect(record.prefixGroup).toBe(index % 3);
      expect(record.sessionId).toBe(`session-${index % 2}`);
      expect(record.scheduledTime - result.startTime).toBeCloseTo((offsetsMs[index] as number) / 1000, 6);
      expect(record.success).toBe(true);
      expect(record.arrivalTime).toBeGreaterThanOrEqual(record.scheduledTime - 1e-4);
    });
    expect(result.endTime).toBeGreaterThanOrEqual(Math.max(...result.records.map((record) => record.finishTime ?? 0)));
  });

  it('never makes a request wait for another to finish', async () => {
    const count = 10;
    const client = new RecordingClient(300);
    const offsetsMs = Float64Array.from({ length: count }, (_, index) => index * 10);
    await run({ requests: workload(count), warmupRequests: [], arrivalOffsetsMs: offsetsMs, client, clock: fakeClock });
    expect(client.maxInFlight).toBe(count);
    const firstFinishMs = Math.min(...client.log.map((entry) => entry.finishedMs ?? Infinity));
    expect(Math.max(...client.log.map((entry) => entry.sentMs))).toBeLessThan(firstFinishMs);
  });

  it('keeps the schedule absolute while the event loop is blocked: the backlog goes out at once, later instants unshifted', async () => {
    const later = Array.from({ length: 10 }, (_, index) => 200 + index * 10);
    const offsetsMs = Float64Array.from([0, 10, 20, 30, 40, ...later]);
    let blocked = false;
    // The first send stalls the event loop for 100 ms: the clock jumps on and no timer fires meanwhile.
    const client = new RecordingClient(20, () => {
      if (!blocked) {
        blocked = true;
        vi.setSystemTime(Date.now() + 100);
      }
    });
    const result = await run({ requests: workload(offsetsMs.length), warmupRequests: [], arrivalOffsetsMs: offsetsMs, client, clock: fakeClock });
    // The schedule origin on the monotonic clock (epoch seconds hold it to a fraction of a microsecond).
    const t0Ms = (result.startTime - fakeClock.toEpochSeconds(0)) * 1000;
    const sentAfterT0 = client.log.map((entry) => entry.sentMs - t0Ms);
    // Requests due at 10..40 ms could only go out when the block ended (100 ms), and all at once.
    expect(sentAfterT0.slice(0, 5)).toEqual([0, 100, 100, 100, 100]);
    // Their records keep their own instants, so the lag is visible rather than hidden.
    for (const index of [1, 2, 3, 4]) {
      const record = result.records[index];
      expect((record?.scheduledTime ?? 0) - result.startTime).toBeCloseTo((offsetsMs[index] as number) / 1000, 6);
      expect(((record?.arrivalTime ?? 0) - (record?.scheduledTime ?? 0)) * 1000).toBeCloseTo(100 - (offsetsMs[index] as number), 3); // epoch seconds near 1.7e9 hold a tenth of a microsecond
    }
    // The requests after the block are not pushed back by it: a pacer that slept relative gaps after the late burst
    // would send every one of them 60 ms or more late. Each goes exactly at its instant.
    const laterLagsMs = later.map((offsetMs, index) => (sentAfterT0[5 + index] as number) - offsetMs);
    expect(laterLagsMs).toEqual(new Array<number>(later.length).fill(0));
    result.records.slice(5).forEach((record, index) => {
      expect(record.scheduledTime - result.startTime).toBeCloseTo((later[index] as number) / 1000, 6);
    });
  });

  it('holds arrivals beyond maxConcurrency and marks them', async () => {
    const count = 12;
    const client = new RecordingClient(30);
    const offsetsMs = new Float64Array(count);
    const result = await run({ requests: workload(count), warmupRequests: [], arrivalOffsetsMs: offsetsMs, maxConcurrency: 3, client, clock: fakeClock });
    expect(client.maxInFlight).toBe(3);
    expect(result.records).toHaveLength(count);
    expect(result.records.filter((record) => record.heldForConcurrency === true)).toHaveLength(count - 3);
    const lastLagS = (result.records[count - 1]?.arrivalTime ?? 0) - (result.records[count - 1]?.scheduledTime ?? 0);
    expect(lastLagS).toBeCloseTo(0.09, 6); // three waves of 30 ms before its turn
    expect(result.records.every((record) => record.success)).toBe(true);
  });

  // SGLang's bench_serving gathers every warmup task at once (asyncio.gather), behind its --max-concurrency semaphore.
  it('sends warmup requests first, all at once, and keeps them out of the records, in order', async () => {
    const client = new RecordingClient((request) => (request.requestId === 'w-warmup-0' ? 30 : 15));
    const result = await run({
      requests: workload(4),
      warmupRequests: workload(3, 100),
      arrivalOffsetsMs: new Float64Array(4),
      client,
      clock: fakeClock,
      requestIdPrefix: 'w-',
    });
    expect(result.records).toHaveLength(4);
    expect(result.records.every((record) => !record.warmup && record.datasetIndex < 100)).toBe(true);
    expect(result.warmupRecords.map((record) => record.requestId)).toEqual(['w-warmup-0', 'w-warmup-1', 'w-warmup-2']);
    expect(result.warmupRecords.every((record) => record.warmup)).toBe(true);
    const warmups = client.log.slice(0, 3);
    const measured = client.log.slice(3);
    const firstWarmupFinishedMs = Math.min(...warmups.map((entry) => entry.finishedMs ?? Infinity));
    const lastWarmupFinishedMs = Math.max(...warmups.map((entry) => entry.finishedMs ?? Infinity));
    for (const entry of warmups) expect(entry.sentMs).toBeLessThan(firstWarmupFinishedMs);
    for (const entry of measured) expect(entry.sentMs).toBeGreaterThanOrEqual(lastWarmupFinishedMs);
    expect(result.startTime * 1000).toBeGreaterThanOrEqual(fakeClock.toEpochSeconds(lastWarmupFinishedMs) * 1000 - 0.01);
  });

  it('sends many warmups at once with one listener on the run\'s signal, not one per warmup (Node warns past ten)', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const result = await run({ requests: workload(1), warmupRequests: workload(30, 100), arrivalOffsetsMs: new Float64Array(1), client: new RecordingClient(10), clock: fakeClock });
      expect(result.warmupRecords).toHaveLength(30);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });

  it('sends warmup requests at most maxConcurrency at a time', async () => {
    const client = new RecordingClient(10);
    const result = await run({
      requests: workload(2),
      warmupRequests: workload(5, 100),
      arrivalOffsetsMs: new Float64Array(2),
      maxConcurrency: 2,
      client,
      clock: fakeClock,
      requestIdPrefix: 'c-',
    });
    expect(result.warmupRecords.map((record) => record.requestId)).toEqual(['c-warmup-0', 'c-warmup-1', 'c-warmup-2', 'c-warmup-3', 'c-warmup-4']);
    expect(client.maxInFlight).toBe(2);
  });

  it('stops on abort: nothing more is sent, in-flight requests are recorded as aborted, and it resolves promptly', async () => {
    const count = 100;
    const offsetsMs = Float64Array.from({ length: count }, (_, index) => index * 10);
    const client = new RecordingClient(500);
    const controller = new AbortController();
    let abortedAtMs = 0;
    // Aborted once sending has begun (a timer set before the run could fire before the pacer's thread has even started
    // on a busy machine): the first progress report after six sends.
    const onProgress = (progress: LoadProgress): void => {
      if (progress.sent < 6 || controller.signal.aborted) return;
      abortedAtMs = fakeClock.nowMs();
      controller.abort();
    };
    const result = await run({ requests: workload(count), warmupRequests: [], arrivalOffsetsMs: offsetsMs, client, clock: fakeClock, signal: controller.signal, onProgress });
    // Promptly: without waiting for the client's 500 ms answers or the rest of the schedule, no time passes at all.
    const afterAbortMs = fakeClock.nowMs() - abortedAtMs;
    expect(result.interrupted).toBe(true);
    expect(afterAbortMs).toBe(0);
    // Exactly the requests due before the abort went out (the progress report that aborts, at 250 ms, comes before
    // the send due at that same instant).
    const t0Ms = (result.startTime - fakeClock.toEpochSeconds(0)) * 1000;
    const dueBeforeAbort = offsetsMs.filter((offsetMs) => t0Ms + offsetMs < abortedAtMs).length;
    expect(dueBeforeAbort).toBeGreaterThan(5);
    expect(client.log).toHaveLength(dueBeforeAbort);
    expect(result.records).toHaveLength(client.log.length);
    expect(result.records.every((record) => record.error === 'aborted' && !record.success)).toBe(true);
  });

  it('records a client that throws as a failed request and carries on', async () => {
    const client: ProtocolClient = {
      protocol: 'throwing',
      send: (request) => (request.requestId.endsWith('-1') ? Promise.reject(new Error('boom')) : Promise.resolve({ success: true })),
      close: () => Promise.resolve(),
    };
    const result = await run({ requests: workload(3), warmupRequests: [], arrivalOffsetsMs: new Float64Array(3), client, clock: fakeClock, requestIdPrefix: 'x-' });
    expect(result.records.map((record) => record.success)).toEqual([true, false, true]);
    expect(result.records[1]?.error).toBe('network_error');
    expect(result.records[1]?.errorMessage).toMatch(/boom/);
  });

  it('reports progress every 250 ms and once at the end', async () => {
    const progress: LoadProgress[] = [];
    const offsetsMs = Float64Array.from({ length: 20 }, (_, index) => index * 40);
    await run({ requests: workload(20), warmupRequests: [], arrivalOffsetsMs: offsetsMs, client: new RecordingClient(10), clock: fakeClock, onProgress: (snapshot) => progress.push(snapshot) });
    // The run lasts 770 ms (the last instant, 760 ms, and its 10 ms answer): reports at 250, 500 and 750 ms, then done.
    expect(progress.map((snapshot) => [snapshot.phase, snapshot.elapsedMs])).toEqual([['measured', 250], ['measured', 500], ['measured', 750], ['done', 770]]);
    const last = progress[progress.length - 1];
    expect(last).toMatchObject({ phase: 'done', total: 20, sent: 20, completed: 20, failed: 0, inFlight: 0 });
    expect(progress.some((snapshot) => snapshot.phase === 'measured' && snapshot.sent > 0 && snapshot.sent < 20)).toBe(true);
  });

  it('100 requests at 50 req/s: scheduled instants spread over about 2 s, each sent in the millisecond it is due', async () => {
    const offsetsMs = createArrivalSchedule({ process: 'poisson', requestRate: 50 }, 100, new SeededRandom(1));
    const client = new RecordingClient(5);
    const result = await run({ requests: workload(100), warmupRequests: [], arrivalOffsetsMs: offsetsMs, client, clock: fakeClock });
    const scheduledSpanS = (result.records[99]?.scheduledTime ?? 0) - (result.records[0]?.scheduledTime ?? 0);
    const sentSpanMs = (client.log[99]?.sentMs ?? 0) - (client.log[0]?.sentMs ?? 0);
    expect(scheduledSpanS).toBeGreaterThan(1.4);
    expect(scheduledSpanS).toBeLessThan(2.6);
    // Fake time moves in whole milliseconds: a request due within one goes out at its end, never before its instant.
    expect(Math.abs(sentSpanMs / 1000 - scheduledSpanS)).toBeLessThan(0.001);
    result.records.forEach((record) => {
      const lagS = (record.dispatchTime as number) - record.scheduledTime;
      expect(lagS).toBeGreaterThanOrEqual(0);
      expect(lagS).toBeLessThan(0.001);
    });
  });

  it('rejects a schedule that does not fit the workload', async () => {
    const client = new RecordingClient(1);
    await expect(run({ requests: workload(3), warmupRequests: [], arrivalOffsetsMs: new Float64Array(2), client, clock: fakeClock })).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    await expect(run({ requests: workload(2), warmupRequests: [], arrivalOffsetsMs: Float64Array.from([5, 1]), client, clock: fakeClock })).rejects.toThrow(/non-decreasing/);
    await expect(run({ requests: workload(2), warmupRequests: [], arrivalOffsetsMs: new Float64Array(2), maxConcurrency: 0, client, clock: fakeClock })).rejects.toThrow(/maxConcurrency/);
    expect(client.log).toHaveLength(0);
  });
});

describe('runLoad (closed loop)', () => {
  it('keeps exactly N requests in flight until the workload runs out', async () => {
    const client = new RecordingClient(20);
    const result = await run({
      requests: workload(12),
      warmupRequests: [],
      arrivalOffsetsMs: new Float64Array(0),
      mode: { kind: 'closed', concurrency: 3 },
      client,
      clock: fakeClock,
    });
    expect(client.maxInFlight).toBe(3);
    expect(result.records).toHaveLength(12);
    // Four waves of 20 ms: each wave starts as the one before finishes.
    const sorted = [...client.log].sort((a, b) => a.sentMs - b.sentMs);
    expect(sorted.map((entry) => entry.sentMs - (sorted[0]?.sentMs ?? 0))).toEqual([0, 0, 0, 20, 20, 20, 40, 40, 40, 60, 60, 60]);
  });

  it('waits the think time between a user\'s requests', async () => {
    const client = new RecordingClient(5);
    await run({
      requests: workload(4),
      warmupRequests: [],
      arrivalOffsetsMs: new Float64Array(0),
      mode: { kind: 'closed', concurrency: 1, thinkTimeMs: 30 },
      client,
      clock: fakeClock,
    });
    for (let index = 1; index < 4; index++) {
      expect((client.log[index]?.sentMs ?? 0) - (client.log[index - 1]?.finishedMs ?? 0)).toBe(30);
    }
  });
});

describe('runLoad (closed loop with stages)', () => {
  it('follows step and linear stages of user counts, and stops sending when the stages end', async () => {
    const inFlightAtSend: { atMs: number; inFlight: number }[] = [];
    const tracking = new RecordingClient(10, () => inFlightAtSend.push({ atMs: fakeClock.nowMs(), inFlight: tracking.inFlight }));
    const startMs = fakeClock.nowMs();
    const result = await run({
      requests: workload(100_000),
      warmupRequests: [],
      arrivalOffsetsMs: new Float64Array(0),
      mode: {
        kind: 'closed',
        concurrency: 1,
        stages: [
          { durationS: 0.3, concurrency: 2 },
          { durationS: 0.3, concurrency: 6 },
          { durationS: 0.4, concurrency: 0, ramp: 'linear' },
        ],
      },
      client: tracking,
      clock: fakeClock,
    });
    const tookMs = fakeClock.nowMs() - startMs;
    // The stages last 1 s; the requests in flight then (10 ms each) finish after it.
    expect(tookMs).toBeGreaterThanOrEqual(1000);
    expect(tookMs).toBeLessThanOrEqual(1010);
    expect(result.records.length).toBeLessThan(100_000);
    const maxIn = (fromMs: number, toMs: number): number =>
      Math.max(0, ...inFlightAtSend.filter((entry) => entry.atMs - startMs >= fromMs && entry.atMs - startMs < toMs).map((entry) => entry.inFlight));
    expect(maxIn(20, 280)).toBe(2);
    expect(maxIn(340, 580)).toBe(6);
    expect(maxIn(940, 1000)).toBeLessThanOrEqual(3);
    expect(tracking.maxInFlight).toBe(6);
  });

  it('rejects impossible stages', async () => {
    await expect(
      run({
        requests: workload(2),
        warmupRequests: [],
        arrivalOffsetsMs: new Float64Array(0),
        mode: { kind: 'closed', concurrency: 1, stages: [{ durationS: 1, concurrency: 1.5 }] },
        client: new RecordingClient(1),
        clock: fakeClock,
      }),
    ).rejects.toThrow(/stage 0: concurrency must be a whole number/);
  });
});

describe('runLoad (interrupt with held requests)', () => {
  it('records requests held by maxConcurrency as aborted and never sends them', async () => {
    const client = new RecordingClient(1000);
    const controller = new AbortController();
    const result = await run({
      requests: workload(6),
      warmupRequests: [],
      arrivalOffsetsMs: new Float64Array(6),
      maxConcurrency: 2,
      client,
      clock: fakeClock,
      signal: controller.signal,
      // Aborted once two are out (the client holds each for a second), however long the pacer took to start.
      onProgress: (progress) => {
        if (progress.sent >= 2) controller.abort();
      },
    });
    expect(result.interrupted).toBe(true);
    expect(client.log).toHaveLength(2);
    expect(result.records).toHaveLength(6);
    expect(result.records.every((record) => record.error === 'aborted')).toBe(true);
    expect(result.records.filter((record) => record.heldForConcurrency === true && record.arrivalTime === undefined)).toHaveLength(4);
  });
});

describe('runLoad (interrupt before or during warmup)', () => {
  it('sends nothing when the signal is already aborted', async () => {
    const client = new RecordingClient(10);
    const controller = new AbortController();
    controller.abort();
    const result = await run({ requests: workload(3), warmupRequests: workload(1), arrivalOffsetsMs: new Float64Array(3), client, clock: fakeClock, signal: controller.signal });
    expect(result.interrupted).toBe(true);
    expect(client.log).toHaveLength(0);
    expect(result.records).toHaveLength(0);
    expect(result.warmupRecords).toHaveLength(0);
  });

  it('stops during warmup: the warmup requests in flight are aborted and no measured request is sent', async () => {
    const client = new RecordingClient(1000);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const result = await run({ requests: workload(3), warmupRequests: workload(2), arrivalOffsetsMs: new Float64Array(3), client, clock: fakeClock, signal: controller.signal, requestIdPrefix: 'i-' });
    expect(result.interrupted).toBe(true);
    expect(client.log.map((entry) => entry.requestId)).toEqual(['i-warmup-0', 'i-warmup-1']);
    expect(result.warmupRecords.map((record) => record.error)).toEqual(['aborted', 'aborted']);
    expect(result.records).toHaveLength(0);
  });

  it('stops during a capped warmup: the warmups not yet sent never are', async () => {
    const client = new RecordingClient(1000);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const result = await run({ requests: workload(3), warmupRequests: workload(3), arrivalOffsetsMs: new Float64Array(3), maxConcurrency: 1, client, clock: fakeClock, signal: controller.signal, requestIdPrefix: 'i-' });
    expect(client.log.map((entry) => entry.requestId)).toEqual(['i-warmup-0']);
    expect(result.warmupRecords.map((record) => record.error)).toEqual(['aborted']);
    expect(result.records).toHaveLength(0);
  });
});
