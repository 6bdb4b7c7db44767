import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { toJson } from '../../src/report/json-format.js';
import { fullyTracedRecord, runOf } from './records.js';

/** Requests scheduled every 0.1 s but sent every 0.11 s: a pacer that falls behind its own schedule. */
function lateRun(requestRate: number) {
  return runOf(
    Array.from({ length: 11 }, (_, index) => fullyTracedRecord(index * 0.1, { arrivalTime: undefined })).map((record, index) => ({
      ...record,
      arrivalTime: record.scheduledTime + index * 0.01,
    })),
    { requestRate },
  );
}

describe('offered load', () => {
  it('reports the rate of the drawn schedule beside the target and the achieved rate', () => {
    const load = summarize(lateRun(12)).offeredLoad;
    expect(load.targetRate).toBe(12);
    expect(load.scheduledRate).toBeCloseTo(10, 5); // 10 gaps over 1 s
    expect(load.achievedRate).toBeCloseTo(10 / 1.1, 5); // 10 gaps over 1.1 s
    expect(load.achievedToTargetRatio).toBeCloseTo(10 / 1.1 / 12, 5);
  });

  it('has a null target and ratio for a run without a single target rate (requestRate NaN)', () => {
    const summary = summarize(lateRun(Number.NaN));
    expect(summary.offeredLoad.targetRate).toBeNull();
    expect(summary.offeredLoad.achievedToTargetRatio).toBeNull();
    expect(summary.offeredLoad.scheduledRate).toBeCloseTo(10, 5);
    const json = JSON.parse(toJson(summary)) as { offeredLoad: { targetRate: unknown } };
    expect(json.offeredLoad.targetRate).toBeNull();
  });

  it('keeps an infinite target (all at once) with no ratio and no scheduled rate', () => {
    const run = runOf([fullyTracedRecord(0), fullyTracedRecord(0)], { requestRate: Number.POSITIVE_INFINITY });
    const load = summarize(run).offeredLoad;
    expect(load.targetRate).toBe(Number.POSITIVE_INFINITY);
    expect(load.scheduledRate).toBeNull();
    expect(load.achievedToTargetRatio).toBeNull();
    expect(toJson(load)).toContain('"targetRate": "Infinity"');
  });
});
