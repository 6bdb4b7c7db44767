import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { T0 } from './records.js';
import { sampleRoutingRun } from '../report/sample-run.js';

describe('event impact', () => {
  it('compares errors and throughput before and after each event and times how long errors went on', () => {
    // Node 1 serves every third request; from 3 s on its requests fail 10 ms after they arrive.
    const summary = summarize(sampleRoutingRun());
    const [crash, restore] = summary.events ?? [];
    expect(crash).toMatchObject({ kind: 'crash', node: 1, time: T0 + 3 });
    expect(crash?.before.failuresPerSecond).toBe(0);
    // Requests 61, 64, ..., 97 fail inside [3 s, 5 s): 13 of them, the last at 97 × 0.05 + 0.01 = 4.86 s.
    expect(crash?.failuresUntilNextEvent).toBe(13);
    expect(crash?.after.failuresPerSecond).toBeCloseTo(13 / 2, 9);
    expect(crash?.errorsStoppedAfterSeconds).toBeCloseTo(1.86, 5);
    // Cut at the end of the ramp-up: first arrival (0.001 s) + 10% of the 5.95 s arrival period.
    expect(crash?.before.from).toBeCloseTo(T0 + 0.596, 6);
    expect(crash?.attribution).toBe('node');
    expect(crash?.nodeUrl).toBe('http://127.0.0.1:30002');
    expect(crash?.after.to).toBe(T0 + 5); // cut at the next event
    expect(crash?.before.ttftP50).toBeCloseTo(0.049, 6);
    expect(restore?.kind).toBe('restore');
    expect(restore?.failuresUntilNextEvent).toBe(7);
  });

  it('is absent for a run without events', () => {
    const run = sampleRoutingRun();
    run.events = [];
    expect(summarize(run).events).toBeUndefined();
  });
});

describe('failure timing', () => {
  it('counts requests that arrived before a crash and failed after it as failures after the event', async () => {
    const { recordAt, fullyTracedRecord, runOf } = await import('./records.js');
    const { concurrencyTimeSeries } = await import('../../src/analysis/timeseries.js');
    // Three requests in flight when the crash at 1 s happens; the client sees them fail at 1.2 s.
    const inFlight = [0.5, 0.6, 0.7].map((arrival) =>
      recordAt({ scheduledTime: arrival, arrivalTime: arrival, success: false, error: 'network_error', finishTime: 1.2 }),
    );
    const run = runOf([fullyTracedRecord(0), ...inFlight, fullyTracedRecord(1.5)]);
    run.events.push({ time: T0 + 1, kind: 'crash', node: 0 });
    const [crash] = summarize(run).events ?? [];
    expect(crash?.before.failuresPerSecond).toBe(0);
    expect(crash?.failuresUntilNextEvent).toBe(3);
    expect(crash?.errorsStoppedAfterSeconds).toBeCloseTo(0.2, 5);
    expect(crash?.after.failuresPerSecond).toBeGreaterThan(0);
    // The time series bins them at 1.2 s too.
    const series = concurrencyTimeSeries(run.records, 0.1);
    const binOf = (time: number) => Math.floor((T0 + time - (series?.windowStart as number)) / 0.1);
    expect(series?.failures[binOf(1.2)]).toBe(3);
    expect([...(series?.failures ?? [])].reduce((sum, value) => sum + value, 0)).toBe(3);
  });
});
