import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLOCK_ANCHOR_ENV } from '../../../src/clock/clock.js';
import { localPlacement } from '../../../src/cluster/placement/local/local-placement.js';
import { runLoadAcrossGenerators } from '../../../src/load/generator-process/run-load-across-generators.js';
import { runLoadAcrossWorkers } from '../../../src/load/multi-worker/run-load-across-workers.js';
import type { PlacedProcess, PlacementRequest, ProcessPlacement } from '../../../src/types/cluster.js';
import type { GeneratorLoss, LoadProgress, LoadResult, ProtocolClientSpec } from '../../../src/types/load.js';
import type { RequestRecord } from '../../../src/types/record.js';
import { SeededRandom } from '../../../src/utils/random.js';
import { createArrivalSchedule } from '../../../src/workload/arrivals/arrival-registry.js';
import { assertCliBuilt } from '../../helpers/cli.js';
import { faketimeMissing } from '../../helpers/require-tool.js';
import { loadOptions, startLoadTarget, withoutMeasuredTimes, wordWorkload, type LoadTarget } from '../helpers/load-fixtures.js';

// The generators are `servelab load-generator` processes from the built CLI in dist/ (`npm run build` first).

/**
 * The local placement, keeping what it started, and optionally running some processes under Debian's faketime (their
 * wall clock shifted, their monotonic clock not): a generator "on a host whose clock is off". Such a process is
 * given no clock anchor (an empty CLOCK_ANCHOR_ENV), as a process on another host gets none: it measures its own.
 */
class RecordingPlacement implements ProcessPlacement {
  readonly name = 'local-recording';
  readonly started: PlacedProcess[] = [];
  constructor(private readonly shiftFor: (request: PlacementRequest) => string | undefined = () => undefined) {}

  spawn(request: PlacementRequest): PlacedProcess {
    const shift = this.shiftFor(request);
    const placed = localPlacement.spawn(
      shift === undefined
        ? request
        : { ...request, command: 'faketime', args: ['-f', shift, request.command, ...request.args], env: { ...request.env, FAKETIME_DONT_FAKE_MONOTONIC: '1', [CLOCK_ANCHOR_ENV]: '' } },
    );
    this.started.push(placed);
    return placed;
  }
  freePort(node?: string): Promise<number> {
    return localPlacement.freePort(node);
  }
  assertPortFree(port: number, flag: string, node?: string): Promise<void> {
    return localPlacement.assertPortFree(port, flag, node);
  }
  hostOf(node?: string): string {
    return localPlacement.hostOf(node);
  }
}

describe('runLoadAcrossGenerators', () => {
  let target: LoadTarget;
  let clientSpec: ProtocolClientSpec;

  beforeAll(async () => {
    assertCliBuilt();
    target = await startLoadTarget();
    clientSpec = target.clientSpec;
  });

  afterAll(async () => {
    await target.server.close();
  });

  it('gives the in-process path\'s records (same ids, same content, scheduled exactly at t0 + offset), none lost, each as it arrives', async () => {
    const requests = wordWorkload(40);
    const offsetsMs = createArrivalSchedule({ process: 'poisson', requestRate: 100 }, requests.length, new SeededRandom(11));
    const single = await runLoadAcrossWorkers({ ...loadOptions(clientSpec, requests, offsetsMs), workers: 1, requestIdPrefix: 'same-' });
    const placement = new RecordingPlacement();
    const streamed: RequestRecord[] = [];
    const progress: LoadProgress[] = [];
    const spread = await runLoadAcrossGenerators({
      ...loadOptions(clientSpec, requests, offsetsMs),
      generators: 3,
      placement,
      warmupRequests: wordWorkload(1),
      requestIdPrefix: 'same-',
      onRecord: (record) => streamed.push(record),
      onProgress: (snapshot) => progress.push(snapshot),
    });

    expect(placement.started.map((process) => process.name)).toEqual(['load-generator 0', 'load-generator 1', 'load-generator 2']);
    expect(spread.interrupted).toBe(false);
    expect(spread.records.map((record) => record.requestId)).toEqual(requests.map((_, index) => `same-${index}`));
    expect(spread.records.every((record) => record.success)).toBe(true);
    expect(spread.records.map(withoutMeasuredTimes)).toEqual(single.records.map(withoutMeasuredTimes));
    const t0Ms = Math.round(spread.startTime * 1000);
    expect(spread.records.map((record) => record.scheduledTime)).toEqual(Array.from(offsetsMs, (offsetMs) => (t0Ms + offsetMs) / 1000));
    // Records first: every record was handed on as it came, before the run returned.
    expect(streamed.map((record) => record.requestId).sort()).toEqual(spread.records.map((record) => record.requestId).sort());
    expect(spread.warmupRecords.map((record) => record.requestId)).toEqual(['same-warmup-0']);
    expect(spread.loadGenerators?.map((generator) => [generator.requests, generator.recordsReceived, generator.recordsLost])).toEqual([
      [14, 14, 0],
      [13, 13, 0],
      [13, 13, 0],
    ]);
    for (const generator of spread.loadGenerators ?? []) {
      expect(generator.clock.exchanges).toBeGreaterThanOrEqual(16);
      expect(generator.clock.uncertaintyMs).not.toBeNull();
    }
    const last = progress[progress.length - 1] as LoadProgress;
    expect(last).toMatchObject({ phase: 'done', total: 40, sent: 40, completed: 40, failed: 0, inFlight: 0 });
    // The generators are stopped when the run returns.
    await Promise.all(placement.started.map((process) => process.exited));
  });

  it('turns a generator SIGKILLed mid-run into one loss event and aborted records for its unfinished requests; the others finish', async () => {
    const requests = wordWorkload(60);
    // 20 requests a second over about 3 s: generator 1 still has most of its slice ahead when it is killed.
    const offsetsMs = Float64Array.from(requests, (_, index) => index * 50);
    const placement = new RecordingPlacement();
    const losses: GeneratorLoss[] = [];
    let killed = false;
    const streamed: RequestRecord[] = [];
    const result = await runLoadAcrossGenerators({
      ...loadOptions(clientSpec, requests, offsetsMs),
      generators: 2,
      placement,
      requestIdPrefix: 'kill-',
      onGeneratorLost: (loss) => losses.push(loss),
      onRecord: (record) => {
        streamed.push(record);
        if (!killed && streamed.length >= 6) {
          killed = true;
          placement.started[1]?.signal('SIGKILL');
        }
      },
    });

    expect(losses).toHaveLength(1);
    expect(losses[0]?.generator).toBe('load-generator 1');
    expect(losses[0]?.detail).toMatch(/killed by SIGKILL/);
    // Nothing scheduled is missing: one record per request, in order.
    expect(result.records.map((record) => record.requestId)).toEqual(requests.map((_, index) => `kill-${index}`));
    const generator0 = result.records.filter((_, index) => index % 2 === 0);
    const generator1 = result.records.filter((_, index) => index % 2 === 1);
    expect(generator0.every((record) => record.success)).toBe(true);
    const lost = generator1.filter((record) => !record.success);
    expect(lost.length).toBeGreaterThan(0);
    expect(lost.every((record) => record.error === 'aborted' && /load-generator 1 ended before it delivered/.test(record.errorMessage ?? ''))).toBe(true);
    const report = result.loadGenerators?.[1];
    expect(report?.lost).toBeDefined();
    expect(report?.recordsLost).toBe(lost.length);
    expect(result.loadGenerators?.[0]?.lost).toBeUndefined();
    // The aborted records reached onRecord too (records first holds for them).
    expect(streamed.filter((record) => !record.success)).toHaveLength(lost.length);
  });

  it('gives up a generator that hangs (SIGSTOP): it stops answering clock exchanges, is reported lost and stopped, and the run ends', async () => {
    const requests = wordWorkload(40);
    const offsetsMs = Float64Array.from(requests, (_, index) => index * 50);
    const placement = new RecordingPlacement();
    const losses: GeneratorLoss[] = [];
    let stopped = false;
    const result = await runLoadAcrossGenerators({
      ...loadOptions(clientSpec, requests, offsetsMs),
      generators: 2,
      placement,
      requestIdPrefix: 'hang-',
      // Exchanges every second, each waiting 2.5 s: three unanswered in a row take about 8 s.
      clockExchangeIntervalMs: 1_000,
      onGeneratorLost: (loss) => losses.push(loss),
      onRecord: () => {
        if (stopped) return;
        stopped = true;
        placement.started[0]?.signal('SIGSTOP');
      },
    });

    expect(losses.map((loss) => loss.generator)).toEqual(['load-generator 0']);
    expect(losses[0]?.detail).toMatch(/clock exchanges in a row unanswered/);
    expect(result.records).toHaveLength(40);
    expect(result.records.filter((_, index) => index % 2 === 1).every((record) => record.success)).toBe(true);
    expect(result.loadGenerators?.[0]?.recordsLost).toBeGreaterThan(0);
    // Stopped means gone: a stopped process still gets the SIGKILL after the grace period.
    expect((await placement.started[0]?.exited)?.signal).toBe('SIGKILL');
  });

  const noFaketime = faketimeMissing();
  it.skipIf(noFaketime !== undefined)('measures a generator whose clock is 5 s ahead and moves its records onto this clock', async () => {
    const requests = wordWorkload(30);
    const offsetsMs = Float64Array.from(requests, (_, index) => index * 10);
    const placement = new RecordingPlacement((request) => (request.name === 'load-generator 1' ? '+5s' : undefined));
    const result: LoadResult = await runLoadAcrossGenerators({
      ...loadOptions(clientSpec, requests, offsetsMs),
      generators: 2,
      placement,
      requestIdPrefix: 'shift-',
    });

    const [plain, shifted] = result.loadGenerators ?? [];
    const plainOffsetMs = plain?.clock.offsetMs as number;
    const shiftedOffsetMs = shifted?.clock.offsetMs as number;
    const plainUncertaintyMs = plain?.clock.uncertaintyMs as number;
    const shiftedUncertaintyMs = shifted?.clock.uncertaintyMs as number;
    // The plain generator inherited this process's anchor: exactly one epoch, nothing estimated, and every exchange
    // bracketed zero. The shifted one (no anchor given, as on another host) anchored itself and is measured: 5 s within
    // the exchanges' own bounds, plus a tenth of a millisecond for its own anchor's bracket.
    expect(plain?.clock).toMatchObject({ sharedAnchor: true, offsetMs: 0, uncertaintyMs: 0, consistent: true });
    expect(shifted?.clock.sharedAnchor).toBe(false);
    expect(Math.abs(shiftedOffsetMs - plainOffsetMs - 5_000)).toBeLessThanOrEqual(shiftedUncertaintyMs + 0.1);
    expect(result.records.every((record) => record.success)).toBe(true);
    for (const [index, record] of result.records.entries()) {
      const uncertaintyS = ((index % 2 === 1 ? shiftedUncertaintyMs : plainUncertaintyMs) + 0.5) / 1000;
      // On one clock the corrected record is causal: never sent before its instant, sent before the server (on this
      // host's clock) received it, and the first token seen by the server before the client saw it.
      expect(record.dispatchTime as number).toBeGreaterThanOrEqual(record.scheduledTime - uncertaintyS);
      expect(record.arrivalTime as number).toBeLessThanOrEqual((record.serverCreatedTime as number) + uncertaintyS);
      expect(record.serverFirstTokenTime as number).toBeLessThanOrEqual((record.firstTokenTime as number) + uncertaintyS);
      // Uncorrected, the shifted generator's instants would lie 5 s after the server's: the same checks would fail.
      if (index % 2 === 1) expect((record.arrivalTime as number) + shiftedOffsetMs / 1000).toBeGreaterThan((record.serverCreatedTime as number) + 4);
    }
  });
});
