import { describe, expect, it } from 'vitest';
import { concurrencyTimeSeries, defaultResolutionSeconds, sweepIntervals } from '../../src/analysis/timeseries.js';
import { recordAt } from './records.js';

describe('concurrency time series', () => {
  it('sweeps half-open intervals: peak, integral and per-bin means and peaks', () => {
    const intervals = { starts: Float64Array.of(2, 0, 1), ends: Float64Array.of(4, 2, 3) };
    const sweep = sweepIntervals(intervals, 0, 4, 1);
    expect(sweep.peak).toBe(2); // the first ends at 2 exactly when the third starts
    expect(sweep.integral).toBeCloseTo(6, 12);
    expect(Array.from(sweep.binMeans ?? [])).toEqual([1, 2, 2, 1]);
    expect(Array.from(sweep.binPeaks ?? [])).toEqual([1, 2, 2, 1]);
  });

  it('spreads a partial overlap over bins by time', () => {
    const sweep = sweepIntervals({ starts: Float64Array.of(0.5), ends: Float64Array.of(2.25) }, 0, 3, 1);
    expect(Array.from(sweep.binMeans ?? [])).toEqual([0.5, 1, 0.25]);
  });

  it('reconstructs stages and event counts from records', () => {
    const records = [
      recordAt({ arrivalTime: 0, routerSendTime: 0.5, queueTimeStart: 0.5, queueTimeEnd: 1, finishTime: 2, actualOutputTokens: 7 }),
      recordAt({ arrivalTime: 1, routerSendTime: 1, queueTimeStart: 1, queueTimeEnd: 1.5, finishTime: 4, actualOutputTokens: 3 }),
      recordAt({ arrivalTime: 3, success: false, error: 'connect_refused' }),
    ];
    const series = concurrencyTimeSeries(records, 1);
    expect(series?.binCount).toBe(4);
    expect(Array.from(series?.stages.in_system?.mean ?? [])).toEqual([1, 2, 1, 1]);
    expect(Array.from(series?.stages.in_router?.mean ?? [])).toEqual([0.5, 0, 0, 0]);
    expect(Array.from(series?.stages.running?.mean ?? [])).toEqual([0, 1.5, 1, 1]);
    expect(Array.from(series?.arrivals ?? [])).toEqual([1, 1, 0, 1]);
    expect(Array.from(series?.completions ?? [])).toEqual([0, 0, 1, 1]);
    expect(Array.from(series?.failures ?? [])).toEqual([0, 0, 0, 1]);
    expect(Array.from(series?.outputTokens ?? [])).toEqual([0, 0, 7, 3]);
  });

  it('chooses a round resolution giving at most about 600 bins', () => {
    expect(defaultResolutionSeconds(60)).toBe(0.1);
    expect(defaultResolutionSeconds(600)).toBe(1);
    expect(defaultResolutionSeconds(1000)).toBe(2);
  });
});
