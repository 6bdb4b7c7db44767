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

describe('rate time series', async () => {
  const { rateBinning, rateTimeSeries } = await import('../../src/analysis/timeseries.js');

  it('bins a run into about 50–100 equal bins of at least 0.5 s that cover the window exactly', () => {
    expect(rateBinning(30)).toEqual({ binCount: 60, binSeconds: 0.5 });
    expect(rateBinning(3)).toEqual({ binCount: 6, binSeconds: 0.5 });
    expect(rateBinning(0.2)).toEqual({ binCount: 1, binSeconds: 0.2 });
    for (const windowSeconds of [7.3, 51, 101, 250, 999, 3600]) {
      const { binCount, binSeconds } = rateBinning(windowSeconds);
      expect(binSeconds).toBeGreaterThanOrEqual(0.5);
      expect(binCount * binSeconds).toBeCloseTo(windowSeconds, 9);
      if (windowSeconds > 50) {
        expect(binCount).toBeGreaterThanOrEqual(50);
        expect(binCount).toBeLessThanOrEqual(100);
      }
    }
  });

  it('gives a steady 20 req/s as 20 req/s in every bin, not multiples of 20 with spikes', () => {
    // 20 req/s for 10 s, each arrival jittered by up to ±10 ms: 50 ms bins would read 0, 20 or 40 req/s.
    const records = Array.from({ length: 200 }, (_, index) => {
      const arrival = index * 0.05 + 0.01 * Math.sin(index * 1.7);
      return recordAt({ scheduledTime: arrival, arrivalTime: arrival, finishTime: arrival + 0.1 });
    });
    const rates = rateTimeSeries(records);
    expect(rates?.binSeconds).toBeGreaterThanOrEqual(0.5);
    const arrivals = Array.from(rates?.arrivalsPerSecond ?? []);
    expect(arrivals.reduce((sum, rate) => sum + rate * (rates?.binSeconds as number), 0)).toBeCloseTo(200, 9);
    for (const rate of arrivals.slice(1, -1)) expect(Math.abs(rate - 20)).toBeLessThanOrEqual(2.5);
  });
});
