import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { buildReportHtml } from '../../src/report/html/html-reporter.js';
import { formatTerminalSummary } from '../../src/report/terminal/format-terminal-summary.js';
import { fullyTracedRecord, recordAt, runOf } from '../analysis/records.js';

describe('why requests failed, in the terminal and report.html', () => {
  const run = runOf([
    fullyTracedRecord(0),
    recordAt({ scheduledTime: 1, arrivalTime: 1.001, success: false, error: 'http_5xx', errorMessage: 'HTTP 503: <queue full>\nretry later' }),
    recordAt({ scheduledTime: 2, arrivalTime: 2.001, success: false, error: 'http_5xx', errorMessage: 'HTTP 503: <queue full>\nretry later' }),
    recordAt({ scheduledTime: 2, arrivalTime: 2.001, success: false, error: 'http_5xx', errorMessage: 'HTTP 500' }),
    recordAt({ scheduledTime: 3, arrivalTime: 3.001, success: false, error: 'stream_truncated' }),
  ]);
  const summary = summarize(run);

  it('prints one line per error class with its most common message on one line', () => {
    const text = formatTerminalSummary(run, summary);
    expect(text).toMatch(/http_5xx 3:\s+HTTP 503: <queue full> retry later \(2\)\n/);
    expect(text).toMatch(/stream_truncated 1:\s+no message\n/);
    expect(text.indexOf('http_5xx 3:')).toBeLessThan(text.indexOf('stream_truncated 1:'));
  });

  it('cuts a long message in the terminal', () => {
    const long = runOf([recordAt({ scheduledTime: 0, arrivalTime: 0.001, success: false, error: 'network_error', errorMessage: 'y'.repeat(200) })]);
    const line = formatTerminalSummary(long, summarize(long)).split('\n').find((candidate) => candidate.startsWith('network_error 1:')) as string;
    expect(line).toContain(`${'y'.repeat(99)}… (1)`);
  });

  it('shows an escaped errors table in report.html', () => {
    const html = buildReportHtml(run, summary, []);
    expect(html).toContain('<h2>Errors</h2>');
    expect(html).toContain('<tr><td>http_5xx</td><td>3</td><td>HTTP 503: &lt;queue full&gt;\nretry later</td><td>2</td></tr>');
    expect(html).toContain('<tr><td>stream_truncated</td><td>1</td><td>(no message)</td><td>0</td></tr>');
    const clean = runOf([fullyTracedRecord(0)]);
    expect(buildReportHtml(clean, summarize(clean), [])).not.toContain('<h2>Errors</h2>');
  });
});
