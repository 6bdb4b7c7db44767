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

describe('load held back by maxConcurrency', () => {
  it('counts held requests, their share and the hold (dispatch − scheduled) over held requests only', () => {
    const run = runOf([
      fullyTracedRecord(0),
      // Dispatched 5 ms late without being held: the generator fell behind; that is not a hold.
      fullyTracedRecord(0.1, { dispatchTime: undefined }),
      fullyTracedRecord(0.2, { heldForConcurrency: true }),
      fullyTracedRecord(0.3, { heldForConcurrency: true }),
    ]);
    // recordAt shifts the named time fields by T0 but not dispatchTime: set it as epoch seconds.
    const [, late, first, second] = run.records;
    (late as { dispatchTime?: number }).dispatchTime = (late?.scheduledTime as number) + 0.005;
    (first as { dispatchTime?: number }).dispatchTime = (first?.scheduledTime as number) + 0.1;
    (second as { dispatchTime?: number }).dispatchTime = (second?.scheduledTime as number) + 0.3;
    const held = summarize(run).offeredLoad.heldForConcurrency;
    expect(held.count).toBe(2);
    expect(held.share).toBe(0.5);
    expect(held.holdSeconds?.count).toBe(2);
    expect(held.holdSeconds?.mean).toBeCloseTo(0.2, 5);
    expect(held.holdSeconds?.max).toBeCloseTo(0.3, 5);
  });

  it('is zero with no statistics when nothing was held', () => {
    expect(summarize(runOf([fullyTracedRecord(0)])).offeredLoad.heldForConcurrency).toEqual({ count: 0, share: 0, holdSeconds: null });
  });
});
