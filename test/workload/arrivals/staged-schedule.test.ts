import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../src/utils/random.js';
import { createArrivalSchedule } from '../../../src/workload/arrivals/arrival-registry.js';
import { expectedStageArrivals } from '../../../src/workload/arrivals/stages/staged-schedule.js';
import type { RateStage } from '../../../src/types/workload-settings.js';

function countBetween(offsetsMs: Float64Array, fromS: number, toS: number): number {
  return Array.from(offsetsMs).filter((offset) => offset >= fromS * 1000 && offset < toS * 1000).length;
}

describe('staged arrival schedules', () => {
  it('steps: each stage gets its rate (Poisson within)', () => {
    const stages: RateStage[] = [
      { durationS: 10, rate: 100 },
      { durationS: 10, rate: 300 },
    ];
    expect(expectedStageArrivals(stages)).toBe(4000);
    const offsetsMs = createArrivalSchedule({ process: 'poisson', requestRate: 1, stages }, 4000, new SeededRandom(2));
    expect(countBetween(offsetsMs, 0, 10)).toBeGreaterThan(940);
    expect(countBetween(offsetsMs, 0, 10)).toBeLessThan(1060);
    expect(countBetween(offsetsMs, 10, 20)).toBeGreaterThan(2850);
    expect(countBetween(offsetsMs, 10, 20) + countBetween(offsetsMs, 20, 30)).toBe(4000 - countBetween(offsetsMs, 0, 10));
  });

  it('linear ramp: with constant unit gaps the k-th arrival comes exactly where the cumulative rate reaches k', () => {
    // Rate ramps 0 → 200 req/s over 10 s: Λ(t) = 10 t², so arrival k lands at sqrt(k / 10) s.
    const offsetsMs = createArrivalSchedule(
      { process: 'constant', requestRate: 1, stages: [{ durationS: 10, rate: 200, ramp: 'linear' }] },
      1000,
      new SeededRandom(1),
    );
    for (const k of [1, 10, 250, 999, 1000]) expect(offsetsMs[k - 1]).toBeCloseTo(Math.sqrt(k / 10) * 1000, 6);
  });

  it('a ramp down, then a pause at rate 0, then arrivals resume and continue past the last stage at its rate', () => {
    const stages: RateStage[] = [
      { durationS: 1, rate: 100 },
      { durationS: 1, rate: 50, ramp: 'linear' },
      { durationS: 1, rate: 0 },
      { durationS: 1, rate: 100 },
    ];
    const offsetsMs = createArrivalSchedule({ process: 'constant', requestRate: 1, stages }, 300, new SeededRandom(1));
    // Arrival k lands where Λ = k: the 100th exactly at 1 s, the 175th where the pause ends (3 s).
    expect(countBetween(offsetsMs, 0, 1)).toBe(99);
    expect(offsetsMs[99]).toBeCloseTo(1000, 6);
    expect(countBetween(offsetsMs, 1, 2)).toBe(75);
    expect(offsetsMs[174]).toBeCloseTo(3000, 6);
    expect(countBetween(offsetsMs, 2, 3)).toBe(0);
    expect(countBetween(offsetsMs, 3, 4)).toBe(100);
    expect(offsetsMs[299]).toBeCloseTo(4250, 6);
  });

  it('gamma keeps its burstiness within stages', () => {
    const offsetsMs = createArrivalSchedule(
      { process: 'gamma', requestRate: 1, burstiness: 0.25, stages: [{ durationS: 100, rate: 100 }] },
      10_000,
      new SeededRandom(4),
    );
    const gaps = Array.from(offsetsMs).slice(1).map((offset, index) => offset - (offsetsMs[index] as number));
    const mean = gaps.reduce((sum, gap) => sum + gap, 0) / gaps.length;
    const cv = Math.sqrt(gaps.reduce((sum, gap) => sum + (gap - mean) ** 2, 0) / gaps.length) / mean;
    expect(cv).toBeGreaterThan(1.85);
    expect(cv).toBeLessThan(2.15);
  });

  it('rejects stages that cannot make the schedule', () => {
    const random = new SeededRandom(1);
    expect(() => createArrivalSchedule({ process: 'poisson', requestRate: 1, stages: [] }, 10, random)).toThrow(/stages is empty/);
    expect(() => createArrivalSchedule({ process: 'poisson', requestRate: 1, stages: [{ durationS: 1, rate: 5 }, { durationS: 0, rate: 5 }] }, 10, random)).toThrow(
      /stage 1: durationS/,
    );
    expect(() => createArrivalSchedule({ process: 'poisson', requestRate: 1, stages: [{ durationS: 1, rate: -1 }] }, 10, random)).toThrow(/stage 0: rate/);
    expect(() => createArrivalSchedule({ process: 'constant', requestRate: 1, stages: [{ durationS: 1, rate: 10 }, { durationS: 1, rate: 0 }] }, 20, random)).toThrow(
      /end at rate 0 after about 10 arrivals/,
    );
  });
});
