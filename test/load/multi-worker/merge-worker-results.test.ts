import { describe, expect, it } from 'vitest';
import { latestEndTime, mergeWorkerRecords } from '../../../src/load/multi-worker/merge-worker-results.js';
import type { RequestRecord } from '../../../src/types/record.js';

function record(requestId: string): RequestRecord {
  return { requestId, datasetIndex: 0, warmup: false, inputLength: 1, expectedOutputLength: 1, scheduledTime: 0, success: true };
}

describe('mergeWorkerRecords', () => {
  it('puts the workers records back in workload order by the index in their ids, skipping requests never reached', () => {
    const merged = mergeWorkerRecords([[record('run-0'), record('run-2')], [record('run-1')]], 'run-', 5);
    expect(merged.map((each) => each.requestId)).toEqual(['run-0', 'run-1', 'run-2']);
  });

  it('refuses an id it did not hand out, or one seen twice', () => {
    expect(() => mergeWorkerRecords([[record('other-0')]], 'run-', 2)).toThrow(/unexpected id "other-0"/);
    expect(() => mergeWorkerRecords([[record('run-1')], [record('run-1')]], 'run-', 2)).toThrow(/unexpected id "run-1"/);
  });
});

describe('latestEndTime', () => {
  it('is the latest worker end, or the fallback when none is later', () => {
    expect(latestEndTime([5, 9, 7], 1)).toBe(9);
    expect(latestEndTime([], 3)).toBe(3);
  });
});
