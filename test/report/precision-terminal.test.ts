import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { formatTerminalSummary } from '../../src/report/terminal/format-terminal-summary.js';
import { recordAt, runOf } from '../analysis/records.js';

/** 200 requests whose TTFT is 10 + index ms (arrival to first token): p99 of 200 values interpolates ranks 197 and 198. */
function spreadRun() {
  return runOf(
    Array.from({ length: 200 }, (_, index) =>
      recordAt({ scheduledTime: index * 0.1, arrivalTime: index * 0.1, firstTokenTime: index * 0.1 + 0.01 + index / 1000, finishTime: index * 0.1 + 0.5 + index / 1000, actualOutputTokens: 11 }),
    ),
  );
}

describe('a single run states how precise its percentiles are', () => {
  it('summary: the values p99 rests on, the top values that decide it, and bootstrap intervals over the requests', () => {
    const summary = summarize(spreadRun());
    const ttft = summary.precision?.metrics['ttftSeconds'];
    expect(ttft?.values).toBe(200);
    // rank 0.99 × 199 = 197.01: values at ranks 197, 198, 199 lie at or above it
    expect(ttft?.p99DecidedByTop).toBe(2);
    expect(ttft?.p99.estimate).toBeCloseTo(0.01 + 197.01 / 1000, 6);
    expect(ttft?.p99.method).toBe('bootstrap-requests');
    expect(ttft?.p99.low).toBeLessThan(ttft?.p99.estimate as number);
    expect(ttft?.p99.high).toBeGreaterThanOrEqual(ttft?.p99.estimate as number);
    // p50 of 10..209 ms is 109.5 ms; its interval is a few ms either side
    expect(ttft?.p50.low).toBeGreaterThan(0.09);
    expect(ttft?.p50.high).toBeLessThan(0.13);
    expect(summary.precision?.resamples).toBe(2000);
  });

  it('terminal: one line per headline metric with the intervals and what p99 rests on', () => {
    const run = spreadRun();
    const text = formatTerminalSummary(run, summarize(run));
    expect(text).toMatch(/Precision \(ms, 95% bootstrap intervals over requests\)/);
    expect(text).toMatch(/TTFT\s+p50 109\.5 \[\d+\.\d+, \d+\.\d+\]\s+p99 207\.0 \[\d+\.\d, \d+\.\d\]; p99 from 200 requests: the top 2 decide it/);
  });
});

describe('report.html states the precision too', () => {
  it('a Precision section with what p99 rests on and the intervals', async () => {
    const { buildReportHtml } = await import('../../src/report/html/html-reporter.js');
    const run = spreadRun();
    const html = buildReportHtml(run, summarize(run), []);
    expect(html).toContain('<section id="precision"><h2>Precision</h2>');
    // TTFT: 200 values, the top 2 decide p99, p99 207.010 ms
    expect(html).toMatch(/<td>TTFT<\/td><td>200<\/td><td>2<\/td><td>109\.500<\/td><td>[\d.]+ – [\d.]+<\/td>.*<td>207\.010<\/td>/);
  });
});
