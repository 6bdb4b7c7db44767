import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { judgeProbe } from '../../src/experiments/sweep/probe-judgement.js';
import type { HarnessReport } from '../../src/types/harness.js';
import { recordAt, runOf } from '../analysis/records.js';

/** 400 requests, one a second, each 2.5 s from arrival to finish with TTFT 50 ms: STABLE, long enough to judge, every objective met. */
function calmSummary() {
  const records = Array.from({ length: 400 }, (_, index) => recordAt({ scheduledTime: index, arrivalTime: index, firstTokenTime: index + 0.05, finishTime: index + 2.5, actualOutputTokens: 11 }));
  return summarize(runOf(records, { requestRate: 1 }), { slo: { ttftMs: 100 } });
}

describe('a search probe', () => {
  it('passes a calm run that met the objectives', () => {
    expect(judgeProbe(calmSummary(), 0.9, false).state).toBe('pass');
  });

  it('does not judge a run whose harness was SUSPECT: its latencies may be servelab\'s own lateness', () => {
    const summary = { ...calmSummary(), harness: { state: 'suspect' } as HarnessReport };
    expect(judgeProbe(summary, 0.9, false)).toEqual({ state: 'not_judged', why: 'harness SUSPECT: servelab itself may have shaped the latencies' });
    // An affected (not suspect) harness names metrics without doubting the run: judged as usual.
    expect(judgeProbe({ ...calmSummary(), harness: { state: 'affected' } as HarnessReport }, 0.9, false).state).toBe('pass');
  });
});
