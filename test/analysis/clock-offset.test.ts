import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { correctRunClocks, clockOffsetSampleOf } from '../../src/analysis/clock-offset/correct-run-clocks.js';
import { estimateClockOffset, offsetAt, type OffsetFit } from '../../src/analysis/clock-offset/estimate-clock-offset.js';
import { deriveColumns } from '../../src/analysis/derive.js';
import { summarize } from '../../src/analysis/summarize.js';
import { writeRunFiles } from '../../src/report/write-run-files.js';
import { formatTerminalSummary } from '../../src/report/terminal/format-terminal-summary.js';
import type { ClockOffsetSample } from '../../src/types/clock-offset.js';
import type { RequestRecord } from '../../src/types/record.js';
import { SeededRandom } from '../../src/utils/random.js';
import { GROSS_SERVER_TIME_TOLERANCE_S, runWindowOf, screenRecords } from '../../src/analysis/data-quality.js';
import { T0, runOf } from './records.js';

/**
 * Synthetic requests with a known truth: a client sends at t, the request takes a forward delay to reach the server,
 * the server works for a while, the first token takes a backward delay to come back. The server stamps its instants on
 * a clock that is `offset(t)` ahead of the client's.
 */
interface Scenario {
  requests: number;
  durationSeconds: number;
  offset: (clientTime: number) => number;
  forwardDelay: (random: SeededRandom) => number;
  backwardDelay: (random: SeededRandom) => number;
  seed?: number;
  host?: string;
}

const exponential = (random: SeededRandom, mean: number): number => -Math.log(1 - random.next()) * mean;

function syntheticRecords(scenario: Scenario): RequestRecord[] {
  const random = new SeededRandom(scenario.seed ?? 7);
  const records: RequestRecord[] = [];
  for (let index = 0; index < scenario.requests; index++) {
    const send = T0 + (index / scenario.requests) * scenario.durationSeconds;
    const received = send + scenario.forwardDelay(random);
    const queued = 0.001 + exponential(random, 0.02);
    const prefill = 0.01 + random.next() * 0.03;
    const firstToken = received + queued + prefill;
    const clientFirstToken = firstToken + scenario.backwardDelay(random);
    const finish = clientFirstToken + 0.2;
    const serverClock = (trueTime: number): number => trueTime + scenario.offset(trueTime);
    records.push({
      requestId: `r${index}`,
      datasetIndex: index,
      warmup: false,
      inputLength: 100,
      expectedOutputLength: 10,
      scheduledTime: send,
      arrivalTime: send,
      routerSendTime: send,
      host: scenario.host ?? 'http://10.254.0.2:8000',
      serverCreatedTime: serverClock(received),
      queueTimeStart: serverClock(received + 0.0002),
      queueTimeEnd: serverClock(received + queued),
      serverFirstTokenTime: serverClock(firstToken),
      firstTokenTime: clientFirstToken,
      finishTime: finish,
      actualOutputTokens: 10,
      success: true,
    });
  }
  return records;
}

function samplesOf(records: readonly RequestRecord[]): ClockOffsetSample[] {
  return records.map(clockOffsetSampleOf).filter((sample): sample is ClockOffsetSample => sample !== undefined);
}

function fitOf(records: readonly RequestRecord[]): OffsetFit {
  const result = estimateClockOffset(samplesOf(records));
  if (result.model === null) throw new Error('expected an estimate');
  return result;
}

const twoMsWithJitter = (random: SeededRandom): number => 0.002 + exponential(random, 0.0004);

describe('estimateClockOffset', () => {
  it('finds a constant offset from the fastest round trips, well inside the typical one', () => {
    const fit = fitOf(syntheticRecords({ requests: 500, durationSeconds: 20, offset: () => 0.25, forwardDelay: twoMsWithJitter, backwardDelay: twoMsWithJitter }));
    expect(fit.model).toBe('constant');
    expect(fit.consistent).toBe(true);
    expect(Math.abs(fit.offsetSeconds - 0.25)).toBeLessThan(0.0005);
    // Bounded by the quickest requests: about the 2 ms each way, not the 2 ms + queueing typical of a request.
    expect(fit.uncertaintySeconds).toBeLessThan(0.0025);
    expect(fit.uncertaintySeconds).toBeGreaterThan(0.0015);
    expect(fit.used).toBe(500);
  });

  it('is exact for symmetric delays and off by half the difference for asymmetric ones (what two-way transfer cannot see)', () => {
    // Epoch doubles resolve about 0.24 µs: "exact" is to the microsecond.
    const symmetric = fitOf(syntheticRecords({ requests: 50, durationSeconds: 5, offset: () => -0.04, forwardDelay: () => 0.002, backwardDelay: () => 0.002 }));
    expect(symmetric.offsetSeconds).toBeCloseTo(-0.04, 6);
    const asymmetric = fitOf(syntheticRecords({ requests: 50, durationSeconds: 5, offset: () => -0.04, forwardDelay: () => 0.003, backwardDelay: () => 0.001 }));
    expect(asymmetric.offsetSeconds).toBeCloseTo(-0.04 + 0.001, 6);
  });

  it('follows a drifting clock over a long run with a line, and reports the drift', () => {
    const driftPerSecond = 40e-6;
    const truth = (time: number): number => 0.01 + driftPerSecond * (time - T0);
    const records = syntheticRecords({ requests: 3000, durationSeconds: 600, offset: truth, forwardDelay: twoMsWithJitter, backwardDelay: twoMsWithJitter });
    const fit = fitOf(records);
    expect(fit.model).toBe('linear');
    expect(fit.consistent).toBe(true);
    expect(Math.abs(fit.driftPerSecond - driftPerSecond) * 1e6).toBeLessThan(3);
    for (const time of [T0, T0 + 300, T0 + 599]) expect(Math.abs(offsetAt(fit, time) - truth(time))).toBeLessThan(0.001);
  });

  it('gives no estimate from too few requests, and says how many it had', () => {
    const records = syntheticRecords({ requests: 3, durationSeconds: 1, offset: () => 0.1, forwardDelay: () => 0.001, backwardDelay: () => 0.001 });
    expect(estimateClockOffset(samplesOf(records))).toEqual({ model: null, used: 3, rejected: 0 });
  });

  it('flags a clock step mid-run as inconsistent instead of averaging it away silently', () => {
    const records = syntheticRecords({
      requests: 400,
      durationSeconds: 40,
      offset: (time) => (time < T0 + 20 ? 0 : 0.1),
      forwardDelay: twoMsWithJitter,
      backwardDelay: twoMsWithJitter,
    });
    const fit = fitOf(records);
    expect(fit.consistent).toBe(false);
  });

  it('rejects a request whose server time exceeds its own round trip, and counts it', () => {
    const samples: ClockOffsetSample[] = [
      ...Array.from({ length: 6 }, (_, index) => ({ time: T0 + index, lower: -0.001, upper: 0.001 })),
      { time: T0 + 7, lower: 0.5, upper: 0.4 },
    ];
    const result = estimateClockOffset(samples);
    expect(result.rejected).toBe(1);
    expect(result.used).toBe(6);
  });
});

describe('correctRunClocks', () => {
  const oneHop = { requests: 300, durationSeconds: 10, forwardDelay: twoMsWithJitter, backwardDelay: twoMsWithJitter };

  it('moves a server clock 250 ms ahead back onto the client clock, keeps the raw records, and never leaves a negative network time', () => {
    const run = runOf(syntheticRecords({ ...oneHop, offset: () => 0.25 }));
    const corrected = correctRunClocks(run);
    const [estimate] = corrected.clockOffsets ?? [];
    expect(estimate?.corrected).toBe(true);
    expect(Math.abs((estimate?.offsetMs ?? 0) - 250)).toBeLessThan(0.5);
    expect(corrected.rawRecords).toBe(run.records);
    const networkTimes = corrected.records.map((record) => deriveColumns(record).network_time as number);
    expect(Math.min(...networkTimes)).toBeGreaterThanOrEqual(0);
    const median = [...networkTimes].sort((a, b) => a - b)[Math.floor(networkTimes.length / 2)] as number;
    // The true forward delay is 2 ms plus a 0.4 ms mean jitter (median 0.28 ms).
    expect(Math.abs(median - 0.00228)).toBeLessThan(0.0005);
    const rawMedian = run.records.map((record) => deriveColumns(record).network_time as number).sort((a, b) => a - b)[150] as number;
    expect(rawMedian).toBeGreaterThan(0.25);
  });

  it('corrects a server clock a constant three days behind: the screening before correction keeps its instants', () => {
    const threeDaysS = -3 * 86_400;
    const truth = syntheticRecords({ ...oneHop, offset: () => 0 });
    const records = syntheticRecords({ ...oneHop, offset: () => threeDaysS }).map((record): RequestRecord => ({ ...record, host: undefined }));
    // As a run does it: the gross screening right after the load (no host yet), the host, correction, the fine screening.
    screenRecords(records, { ...runWindowOf(records, T0 + 11), toleranceS: GROSS_SERVER_TIME_TOLERANCE_S });
    for (const record of records) record.host = 'http://10.254.0.2:8000';
    const run = correctRunClocks(runOf(records, { endTime: T0 + 11 }));
    screenRecords(run.records, runWindowOf(run.records, T0 + 11));
    expect(run.clockOffsets?.[0]?.corrected).toBe(true);
    expect(Math.abs((run.clockOffsets?.[0]?.offsetMs ?? 0) - threeDaysS * 1000)).toBeLessThan(1);
    expect(run.records.every((record) => record.dataQuality === undefined)).toBe(true);
    run.records.forEach((record, index) => expect(Math.abs((record.serverCreatedTime as number) - (truth[index]?.serverCreatedTime as number))).toBeLessThan(0.001));
  });

  it('leaves one-host clocks alone: bounds that include zero prove no offset', () => {
    const run = runOf(syntheticRecords({ ...oneHop, offset: () => 0 }));
    const corrected = correctRunClocks(run);
    expect(corrected.records).toBe(run.records);
    expect(corrected.rawRecords).toBeUndefined();
    expect(corrected.clockOffsets?.[0]?.corrected).toBe(false);
    expect(corrected.clockOffsets?.[0]?.note).toMatch(/agree/);
  });

  it('with clockCorrection off, reports the offset, corrects nothing, and says which columns carry it', () => {
    const run = runOf(syntheticRecords({ ...oneHop, offset: () => 0.25 }));
    run.config['clockCorrection'] = false;
    const corrected = correctRunClocks(run);
    expect(corrected.records).toBe(run.records);
    expect(corrected.clockOffsets?.[0]?.corrected).toBe(false);
    expect(corrected.clockOffsets?.[0]?.note).toMatch(/correction is off.*network_time/);
    const text = formatTerminalSummary(corrected, summarize(corrected), { color: false });
    expect(text).toMatch(/Clock: http:\/\/10\.254\.0\.2:8000: server clock is \+250\.\d+ ± \d\.\d+ ms off/);
  });

  it('leaves virtual-time runs alone (one clock by construction)', () => {
    const run = runOf(syntheticRecords({ ...oneHop, offset: () => 0.25 }), { simulated: true });
    expect(correctRunClocks(run)).toBe(run);
  });

  it('writes raw server instants to requests.jsonl and corrected ones to requests.csv', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'servelab-clock-'));
    try {
      const run = correctRunClocks(runOf(syntheticRecords({ ...oneHop, offset: () => 0.25 })));
      await writeRunFiles(run, summarize(run), directory, ['jsonl', 'csv']);
      const firstJson = JSON.parse((await readFile(join(directory, 'requests.jsonl'), 'utf8')).split('\n')[0] as string) as Record<string, number>;
      const csv = (await readFile(join(directory, 'requests.csv'), 'utf8')).split('\n');
      const header = (csv[0] as string).split(',');
      const row = (csv[1] as string).split(',');
      const created = Number(row[header.indexOf('server_created_time')]);
      const sent = Number(row[header.indexOf('router_send_time')]);
      expect(firstJson['server_created_time'] as number).toBeGreaterThan(0.25);
      expect(created - sent).toBeGreaterThan(0);
      expect(created - sent).toBeLessThan(0.01);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
