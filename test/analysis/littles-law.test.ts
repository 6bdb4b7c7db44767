import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import type { RequestRecord } from '../../src/types/record.js';
import { recordAt, runOf, T0 } from './records.js';

/**
 * A steady stream, built by hand: one request every 100 ms for 100 s, each in the system 500 ms (queued the first
 * 100 ms of it). L = λW = 10/s × 0.5 s = 5 over any window well inside the run.
 */
function steadyRecords(): RequestRecord[] {
  const records: RequestRecord[] = [];
  for (let index = 0; index < 1000; index++) {
    const arrival = index * 0.1;
    records.push(
      recordAt({ scheduledTime: arrival, arrivalTime: arrival, queueTimeStart: arrival + 0.01, queueTimeEnd: arrival + 0.11, finishTime: arrival + 0.5 }),
    );
  }
  return records;
}

describe("Little's law over the steady window (issue 11: over first arrival to last finish it was an identity)", () => {
  it('passes on a steady run, per stage, and states its window', () => {
    const stages = summarize(runOf(steadyRecords())).concurrency.stages;
    const inSystem = stages?.in_system?.littlesLaw;
    expect(inSystem?.verdict).toBe('pass');
    expect(inSystem?.windowStart).toBeCloseTo(T0 + 9.99, 6); // first arrival + 10% of the 99.9 s arrival period
    expect(inSystem?.windowEnd).toBeCloseTo(T0 + 89.91, 6);
    expect(inSystem?.timeWeightedMean).toBeCloseTo(5, 1);
    expect(inSystem?.relativeError).toBeLessThan(0.01);
    expect(stages?.waiting_in_server_queue?.littlesLaw.verdict).toBe('pass');
    expect(stages?.running?.littlesLaw.verdict).toBe('pass');
  });

  it('fails when one record carries a shifted timestamp', () => {
    const records = steadyRecords();
    // One finish read 2,000 s late (a clock step on one record): that request "resides" 2,000 s, which the window
    // never saw it occupy.
    const shifted = records[500] as RequestRecord;
    shifted.finishTime = (shifted.finishTime as number) + 2000;
    const stages = summarize(runOf(records)).concurrency.stages;
    expect(stages?.in_system?.littlesLaw.verdict).toBe('fail');
    expect(stages?.in_system?.littlesLaw.relativeError).toBeGreaterThan(0.1);
    // The queue stage does not use that timestamp, and still passes.
    expect(stages?.waiting_in_server_queue?.littlesLaw.verdict).toBe('pass');
  });

  it('does not pass a run in overload, where residence grows without bound: it says the window is too short to tell', () => {
    const records: RequestRecord[] = [];
    // Overload: arrivals every 100 ms, served one after another in 150 ms each, so every wait is longer than the last.
    let serverFreeAt = 0;
    for (let index = 0; index < 1000; index++) {
      const arrival = index * 0.1;
      const start = Math.max(arrival, serverFreeAt);
      serverFreeAt = start + 0.15;
      records.push(recordAt({ scheduledTime: arrival, arrivalTime: arrival, finishTime: serverFreeAt }));
    }
    const check = summarize(runOf(records)).concurrency.stages?.in_system?.littlesLaw;
    // Waits grow to tens of seconds: a steady window of 80 s cannot average them out.
    expect(check?.verdict).toBe('not_checked');
    expect(check?.reason).toContain('shorter than 20 median residence times');
  });

  it('does not check, and says why, when there are too few requests', () => {
    const check = summarize(runOf(steadyRecords().slice(0, 40))).concurrency.stages?.in_system?.littlesLaw;
    expect(check?.verdict).toBe('not_checked');
    expect(check?.reason).toContain('at least 50 are needed');
  });
});
