import { describe, expect, it } from 'vitest';
import { GROSS_SERVER_TIME_TOLERANCE_S, screenRecord, screenRecords, summarizeDataQuality } from '../../src/analysis/data-quality.js';
import { summarize } from '../../src/analysis/summarize.js';
import { formatTerminalSummary } from '../../src/report/terminal/format-terminal-summary.js';
import { fullyTracedRecord, runOf, T0 } from './records.js';

const WINDOW = { startTime: T0, endTime: T0 + 60 };

describe('data quality: what a server reports that cannot be true is left empty and counted (issue 11)', () => {
  it('keeps an honest record untouched', () => {
    const record = fullyTracedRecord(1);
    const before = { ...record };
    expect(screenRecord(record, WINDOW)).toBe(0);
    expect(record).toEqual(before);
    expect(record.dataQuality).toBeUndefined();
  });

  it('empties server timestamps from 1970, from the year 3000, and negative ones', () => {
    const record = fullyTracedRecord(1);
    // Absolute epoch seconds: 1970, the year 3000, and a negative instant.
    Object.assign(record, { serverCreatedTime: 12, queueTimeStart: 32_503_680_000, serverFirstTokenTime: -5 });
    screenRecord(record, WINDOW);
    expect(record.serverCreatedTime).toBeUndefined();
    expect(record.queueTimeStart).toBeUndefined();
    expect(record.serverFirstTokenTime).toBeUndefined();
    expect(record.queueTimeEnd).toBe(T0 + 1.016);
    expect(record.dataQuality).toBe('serverCreatedTime:outside_run;queueTimeStart:outside_run;serverFirstTokenTime:outside_run');
  });

  it('before clock correction, drops only gross values: a server clock a minute off is kept for the offset estimate', () => {
    // Every server instant a minute late (a skewed clock): outside the window, but not grossly.
    const record = fullyTracedRecord(61);
    expect(screenRecord(record, { ...WINDOW, toleranceS: GROSS_SERVER_TIME_TOLERANCE_S })).toBe(0);
    Object.assign(record, { serverCreatedTime: 12, queueTimeStart: undefined, queueTimeEnd: undefined, serverFirstTokenTime: undefined });
    expect(screenRecord(record, { ...WINDOW, toleranceS: GROSS_SERVER_TIME_TOLERANCE_S })).toBe(1);
  });

  it('keeps a timestamp within the tolerance of the window, and uses the clock offset', () => {
    // Relative to T0: four seconds before the window opens, inside the 5 s tolerance.
    const record = fullyTracedRecord(0, { serverCreatedTime: -4 });
    expect(screenRecord(record, WINDOW)).toBe(0);
    const skewed = fullyTracedRecord(0, { serverCreatedTime: -4 });
    expect(screenRecord(skewed, { ...WINDOW, clockOffsetS: 2 })).toBe(1);
  });

  it('empties both ends of a negative duration', () => {
    const record = fullyTracedRecord(1);
    record.queueTimeEnd = (record.queueTimeStart as number) - 0.5; // scheduled before it was queued
    screenRecord(record, WINDOW);
    expect(record.queueTimeStart).toBeUndefined();
    expect(record.queueTimeEnd).toBeUndefined();
    expect(record.serverCreatedTime).toBeDefined();
    expect(record.dataQuality).toBe('queueTimeStart:negative_duration;queueTimeEnd:negative_duration');
  });

  it('empties impossible usage counts', () => {
    const record = fullyTracedRecord(1, { actualPromptTokens: 1e15, actualOutputTokens: 12, cachedTokens: -3, numRetractions: 0.5 });
    screenRecord(record, WINDOW);
    expect(record.actualPromptTokens).toBeUndefined();
    expect(record.actualOutputTokens).toBeUndefined(); // 12 > max_new_tokens 11
    expect(record.cachedTokens).toBeUndefined();
    expect(record.numRetractions).toBeUndefined();
  });

  it('empties absurd server latencies, throughputs and retraction counts, keeping the request\'s own timing', () => {
    const record = fullyTracedRecord(1, { prefillWaitingLatency: 1e15, prefillLaunchLatency: -7, decodeThroughputTokensPerSecond: 1e300, numRetractions: 1e15 });
    const honest = fullyTracedRecord(2, { prefillWaitingLatency: 0.01, prefillLaunchLatency: 0.03, decodeThroughputTokensPerSecond: 55, numRetractions: 2 });
    const infinite = fullyTracedRecord(3, { prefillWaitingLatency: Number.POSITIVE_INFINITY, decodeThroughputTokensPerSecond: Number.NaN });
    screenRecords([record, honest, infinite], WINDOW);
    expect(record.prefillWaitingLatency).toBeUndefined();
    expect(record.prefillLaunchLatency).toBeUndefined();
    expect(record.decodeThroughputTokensPerSecond).toBeUndefined();
    expect(record.numRetractions).toBeUndefined();
    expect(infinite.prefillWaitingLatency).toBeUndefined();
    expect(infinite.decodeThroughputTokensPerSecond).toBeUndefined();
    expect(honest).toMatchObject({ prefillWaitingLatency: 0.01, prefillLaunchLatency: 0.03, decodeThroughputTokensPerSecond: 55, numRetractions: 2 });
    expect(honest.dataQuality).toBeUndefined();
    // The request's own times stay.
    expect(record.firstTokenTime).toBe(T0 + 1.05);
    expect(record.finishTime).toBe(T0 + 1.25);
    const quality = summarizeDataQuality([record, honest, infinite]);
    expect(quality.recordsAffected).toBe(2);
    expect(quality.removedFields).toMatchObject({
      'prefillWaitingLatency:impossible_value': 2,
      'prefillLaunchLatency:impossible_value': 1,
      'decodeThroughputTokensPerSecond:impossible_value': 2,
      'numRetractions:impossible_count': 1,
    });
  });

  it('keeps the instants of a server whose clock is a constant three days off (estimated from the requests), before correction', () => {
    const threeDaysS = -3 * 86_400;
    const records = Array.from({ length: 40 }, (_, index) => {
      const record = fullyTracedRecord(index);
      for (const field of ['serverCreatedTime', 'queueTimeStart', 'queueTimeEnd', 'serverFirstTokenTime'] as const) record[field] = (record[field] as number) + threeDaysS;
      return record;
    });
    const window = { startTime: T0, endTime: T0 + 60, toleranceS: GROSS_SERVER_TIME_TOLERANCE_S };
    expect(screenRecords(records, window)).toBe(0);
    expect(records.every((record) => record.serverCreatedTime !== undefined && record.dataQuality === undefined)).toBe(true);
    // A value no constant offset explains is still dropped: one record's instant a further day away.
    const outlier = records[10]!;
    outlier.queueTimeEnd = (outlier.queueTimeEnd as number) - 86_400 * 5;
    screenRecords(records, window);
    expect(outlier.queueTimeEnd).toBeUndefined();
    expect(records[11]?.queueTimeEnd).toBeDefined();
    // Right after the load a record has no host yet (a node test sets it later): the records are taken together.
    const hostless = Array.from({ length: 40 }, (_, index) => {
      const record = fullyTracedRecord(index, { host: undefined });
      for (const field of ['serverCreatedTime', 'queueTimeStart', 'queueTimeEnd', 'serverFirstTokenTime'] as const) record[field] = (record[field] as number) + threeDaysS;
      return record;
    });
    expect(screenRecords(hostless, window)).toBe(0);
  });

  it('counts what was removed in the summary and prints it, so the summary shows no absurd figures', () => {
    const records = [fullyTracedRecord(1), fullyTracedRecord(2, { serverCreatedTime: -1_795_419_073 }) /* relative: decades before the run */, fullyTracedRecord(3, { actualOutputTokens: 1e15 })];
    screenRecords(records, WINDOW);
    expect(summarizeDataQuality(records)).toMatchObject({ recordsAffected: 2, removedFields: { 'serverCreatedTime:outside_run': 1, 'actualOutputTokens:impossible_count': 1 } });
    const run = runOf(records);
    const summary = summarize(run);
    expect(summary.dataQuality.recordsAffected).toBe(2);
    expect(summary.tokens.totalOutput).toBe(22);
    const text = formatTerminalSummary(run, summary, {});
    expect(text).toContain('Data quality');
    expect(text).toContain('serverCreatedTime:outside_run');
  });
});
