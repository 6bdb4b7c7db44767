import type { RequestRecord } from '../../src/types/record.js';
import type { RunData, RunInfo } from '../../src/types/run.js';

/** The run origin used by the hand-computed cases (epoch seconds). */
export const T0 = 1_700_000_000;

let nextIndex = 0;

/** A record with only the required fields; times in the overrides are seconds after T0. */
export function recordAt(relative: Partial<RequestRecord>): RequestRecord {
  const timeFields = [
    'scheduledTime',
    'arrivalTime',
    'routerSendTime',
    'serverCreatedTime',
    'queueTimeStart',
    'queueTimeEnd',
    'serverFirstTokenTime',
    'firstTokenTime',
    'finishTime',
  ] as const;
  const index = nextIndex++;
  const record: RequestRecord = {
    requestId: `request-${index}`,
    datasetIndex: index,
    warmup: false,
    inputLength: 100,
    expectedOutputLength: 11,
    scheduledTime: T0,
    success: true,
    ...relative,
  };
  for (const field of timeFields) {
    const value = relative[field];
    if (value !== undefined) record[field] = T0 + value;
  }
  return record;
}

/** A fully traced request whose derived columns are round numbers of milliseconds (see derive.test.ts). */
export function fullyTracedRecord(offsetSeconds = 0, overrides: Partial<RequestRecord> = {}): RequestRecord {
  return recordAt({
    scheduledTime: offsetSeconds + 0,
    arrivalTime: offsetSeconds + 0.001,
    routerSendTime: offsetSeconds + 0.003,
    serverCreatedTime: offsetSeconds + 0.004,
    queueTimeStart: offsetSeconds + 0.006,
    queueTimeEnd: offsetSeconds + 0.016,
    serverFirstTokenTime: offsetSeconds + 0.046,
    firstTokenTime: offsetSeconds + 0.05,
    finishTime: offsetSeconds + 0.25,
    actualPromptTokens: 100,
    actualOutputTokens: 11,
    cachedTokens: 40,
    host: 'http://127.0.0.1:30001',
    interTokenLatencies: [0.02, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02],
    ...overrides,
  });
}

export function runInfo(overrides: Partial<RunInfo> = {}): RunInfo {
  return {
    runId: 'test-run',
    testLevel: 'node',
    target: 'sim',
    status: 'completed',
    startTime: T0,
    endTime: T0 + 10,
    requestRate: 1,
    simulated: false,
    servelabVersion: '0.1.0',
    ...overrides,
  };
}

export function runOf(records: RequestRecord[], info: Partial<RunInfo> = {}): RunData {
  return { info: runInfo(info), config: { requestRate: info.requestRate ?? 1, numPrompts: records.length }, records, events: [] };
}
