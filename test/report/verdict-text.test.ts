import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { formatTerminalSummary } from '../../src/report/terminal/format-terminal-summary.js';
import { recordAt, runOf } from '../analysis/records.js';

describe('a STABLE verdict over a window too short to judge says so', () => {
  /** One request a second for `count` seconds, each 2.5 s from arrival to finish. */
  const steady = (count: number) => runOf(Array.from({ length: count }, (_, index) => recordAt({ scheduledTime: index, arrivalTime: index, firstTokenTime: index + 0.05, finishTime: index + 2.5, actualOutputTokens: 11 })), { requestRate: 1 });

  it('a 100-request run: STABLE, but too short to see growth below about 12.6% of the offered rate', () => {
    const run = steady(100);
    const text = formatTerminalSummary(run, summarize(run));
    expect(text).toMatch(/Verdict:\s+STABLE/);
    expect(text).toMatch(/too short to see a backlog growing slower than 12\.\d% of the offered rate \(a run long enough to judge sees 5%\)/);
  });

  it('a 400-request run is long enough: no such words', () => {
    const run = steady(400);
    expect(formatTerminalSummary(run, summarize(run))).not.toContain('too short to see');
  });
});
