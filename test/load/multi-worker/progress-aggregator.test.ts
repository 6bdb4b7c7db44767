import { describe, expect, it } from 'vitest';
import { ProgressAggregator } from '../../../src/load/multi-worker/progress-aggregator.js';
import type { LoadProgress } from '../../../src/types/load.js';

function progress(sent: number, completed: number, lastSendLagMs: number): LoadProgress {
  return { phase: 'measured', total: 10, sent, completed, failed: 1, inFlight: sent - completed, waitingForConcurrency: 2, elapsedMs: 5, lastSendLagMs };
}

describe('ProgressAggregator', () => {
  it('sums the newest report of each worker, keeps the worst send lag and the whole total', () => {
    const aggregator = new ProgressAggregator(20, 2);
    aggregator.update(0, progress(3, 1, 0.2));
    aggregator.update(0, progress(5, 2, 0.1));
    aggregator.update(1, progress(4, 4, 0.7));
    expect(aggregator.snapshot('measured', 12)).toEqual({
      phase: 'measured',
      total: 20,
      sent: 9,
      completed: 6,
      failed: 2,
      inFlight: 3,
      waitingForConcurrency: 4,
      elapsedMs: 12,
      lastSendLagMs: 0.7,
    });
  });
});
