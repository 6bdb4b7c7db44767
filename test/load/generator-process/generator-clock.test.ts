import { describe, expect, it } from 'vitest';
import { exchangeSample, GeneratorClock } from '../../../src/load/generator-process/generator-clock.js';
import type { RequestRecord } from '../../../src/types/record.js';

/** One exchange with a generator `offsetMs` ahead, `outMs` and `backMs` on the wire, `holdMs` between its stamps. */
function exchange(sentEpochMs: number, offsetMs: number, outMs: number, holdMs: number, backMs: number) {
  const receivedEpochMs = sentEpochMs + outMs + offsetMs;
  const answeredEpochMs = receivedEpochMs + holdMs;
  return exchangeSample(sentEpochMs, { receivedEpochMs, sentEpochMs: answeredEpochMs }, answeredEpochMs - offsetMs + backMs);
}

describe('GeneratorClock', () => {
  it('bounds the offset by every exchange and narrows to half the fastest round trip', () => {
    const clock = new GeneratorClock();
    const t1 = 1_700_000_000_000;
    clock.add(exchange(t1, 5_000, 3, 0.1, 1));
    clock.add(exchange(t1 + 100, 5_000, 0.2, 0.05, 0.3));
    clock.add(exchange(t1 + 200, 5_000, 4, 0.1, 4));
    const estimate = clock.estimate();
    // Bounds: [5000 - 0.3, 5000 + 0.2] from the fastest exchange: midpoint 4999.95, half width 0.25.
    expect(estimate.offsetMs).toBeCloseTo(4_999.95, 6);
    expect(estimate.uncertaintyMs).toBeCloseTo(0.25, 6);
    expect(estimate.bestRoundTripMs).toBeCloseTo(0.5, 6);
    expect(estimate.exchanges).toBe(3);
    expect(estimate.consistent).toBe(true);
    expect(Math.abs((estimate.offsetMs as number) - 5_000)).toBeLessThanOrEqual(estimate.uncertaintyMs as number);
  });

  it('follows a drifting generator clock with the estimator\'s drift line over a long run', () => {
    const clock = new GeneratorClock();
    const t1 = 1_700_000_000_000;
    // 100 ppm: 0.1 ms more every second, over 120 s of exchanges every 2 s with 0.3 ms round trips.
    for (let second = 0; second <= 120; second += 2) clock.add(exchange(t1 + second * 1000, 3_000 + 0.1 * second, 0.15, 0.02, 0.15));
    const estimate = clock.estimate();
    expect(estimate.model).toBe('linear');
    expect(estimate.driftPpm as number).toBeCloseTo(100, 0);
    expect(estimate.consistent).toBe(true);
    // Corrected at the end of the run by the offset there (3012 ms), not the first one.
    expect(clock.toCoordinator(1_700_000_120 + 3.012)).toBeCloseTo(1_700_000_120, 3);
  });

  it('moves the generator-stamped instants onto the coordinator clock and leaves the others', () => {
    const clock = new GeneratorClock();
    clock.add(exchange(1_700_000_000_000, 2_000, 0.5, 0, 0.5));
    const record = {
      requestId: 'r-0', datasetIndex: 0, warmup: false, inputLength: 4, expectedOutputLength: 2, success: true,
      scheduledTime: 1_700_000_010, dispatchTime: 1_700_000_012, arrivalTime: 1_700_000_012.001, firstTokenTime: 1_700_000_012.01,
      finishTime: 1_700_000_012.02, serverCreatedTime: 1_700_000_010.002,
    } satisfies RequestRecord;
    const corrected = clock.correct(record);
    expect(corrected.dispatchTime).toBeCloseTo(1_700_000_010, 6);
    expect(corrected.arrivalTime).toBeCloseTo(1_700_000_010.001, 6);
    expect(corrected.firstTokenTime).toBeCloseTo(1_700_000_010.01, 6);
    expect(corrected.finishTime).toBeCloseTo(1_700_000_010.02, 6);
    // The schedule is the coordinator's and the server's stamps are the server's: neither moves here.
    expect(corrected.scheduledTime).toBe(record.scheduledTime);
    expect(corrected.serverCreatedTime).toBe(record.serverCreatedTime);
    expect(record.dispatchTime).toBe(1_700_000_012);
  });

  it('applies no offset to a generator on this host\'s anchor, and says so when an exchange fails to bracket zero', () => {
    const clock = new GeneratorClock();
    clock.sharesAnchor();
    const t1 = 1_700_000_000_000;
    // Asymmetric delays put the midpoint 0.4 ms off zero; with the anchor shared, zero is known, not estimated.
    clock.add(exchange(t1, 0, 1, 0.1, 0.2));
    expect(clock.estimate()).toMatchObject({ sharedAnchor: true, offsetMs: 0, uncertaintyMs: 0, consistent: true, exchanges: 1 });
    expect(clock.toCoordinator(1_700_000_001.5)).toBe(1_700_000_001.5);
    expect(clock.offsetMsAt(1_700_000_001.5)).toBe(0);
    // An exchange whose bounds exclude zero contradicts the shared anchor (a clock stepped mid-run, or a bug).
    clock.add(exchange(t1 + 1_000, 3, 0.1, 0.1, 0.1));
    expect(clock.estimate().consistent).toBe(false);
  });
});
