import { describe, expect, it } from 'vitest';
import { timeToRecover } from '../../src/analysis/recovery.js';
import type { RequestRecord } from '../../src/types/record.js';
import type { RunEvent } from '../../src/types/run.js';

const T0 = 1_700_000_000;

/** One request every 0.1 s from `fromS` to `toS`, with the given TTFT, failing when `failed`. */
function requests(fromS: number, toS: number, ttftS: number, failed = false): RequestRecord[] {
  const records: RequestRecord[] = [];
  for (let time = fromS; time < toS - 1e-9; time += 0.1) {
    const arrivalTime = T0 + time;
    records.push({
      requestId: `r${time.toFixed(1)}`, datasetIndex: records.length, warmup: false, inputLength: 10, expectedOutputLength: 10,
      scheduledTime: arrivalTime, arrivalTime, success: !failed,
      ...(failed ? { error: 'http_5xx' as const, finishTime: arrivalTime + 0.001 } : { firstTokenTime: arrivalTime + ttftS, finishTime: arrivalTime + ttftS + 0.1 }),
    });
  }
  return records;
}

const crash: RunEvent = { time: T0 + 10, kind: 'crash', node: 1 };
const restore: RunEvent = { time: T0 + 12, kind: 'restore', node: 1 };

describe('time to recover after a restore', () => {
  it('is the time until error rate and median TTFT are back to their level before the failure', () => {
    const records = [...requests(0, 10, 0.01), ...requests(10, 12, 0.01, true), ...requests(12, 14, 0.04), ...requests(14, 20, 0.01)];
    expect(timeToRecover(records, [crash, restore], restore, T0 + 20)).toBeCloseTo(2, 6);
  });

  it('is immediate when nothing got worse after the restore', () => {
    const records = [...requests(0, 10, 0.01), ...requests(10, 12, 0.01, true), ...requests(12, 20, 0.011)];
    expect(timeToRecover(records, [crash, restore], restore, T0 + 20)).toBe(0);
  });

  it('is null when the run never gets back to normal, or when there was no failure to recover from', () => {
    const slow = [...requests(0, 10, 0.01), ...requests(10, 20, 0.05)];
    expect(timeToRecover(slow, [crash, restore], restore, T0 + 20)).toBeNull();
    expect(timeToRecover(slow, [restore], restore, T0 + 20)).toBeNull();
  });

  it('does not count one good window among bad ones as recovered', () => {
    const records = [...requests(0, 10, 0.01), ...requests(12, 13, 0.01), ...requests(13, 15, 0.05), ...requests(15, 20, 0.01)];
    expect(timeToRecover(records, [crash, restore], restore, T0 + 20)).toBeCloseTo(3, 6);
  });
});

describe('the level before a failure', () => {
  it('leaves out requests that arrived before the crash but failed after it', () => {
    // The last second before the crash: its requests are still in flight at 10 s and fail at 10.5 s. Counted as
    // failures of the level before, they would make a 10% failed share "normal" after the restore.
    const caught = requests(9, 10, 0.01).map((record) => {
      const { firstTokenTime: _first, ...rest } = record;
      return { ...rest, success: false, error: 'network_error' as const, finishTime: T0 + 10.5 };
    });
    const tenPercentFailing = [...requests(12, 20, 0.01)].map((record, index) =>
      index % 10 === 0 ? { ...record, success: false, error: 'http_5xx' as const } : record,
    );
    const records = [...requests(0, 9, 0.01), ...caught, ...tenPercentFailing];
    expect(timeToRecover(records, [crash, restore], restore, T0 + 20)).toBeNull();
  });
});
