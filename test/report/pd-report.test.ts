import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { chartDefinitions } from '../../src/report/charts/chart-specs.js';
import { buildReportHtml } from '../../src/report/html/html-reporter.js';
import { formatTerminalSummary } from '../../src/report/terminal/format-terminal-summary.js';
import type { LineMark } from '../../src/report/charts/chart-model.js';
import { fullyTracedRecord, runOf } from '../analysis/records.js';

const PREFILL = 'http://127.0.0.1:30001';
const DECODE = 'http://127.0.0.1:30002';

/** A PD run of 20 requests, one a second; with phases or (as the sim before it models them) without. */
function pdRun(withPhases: boolean) {
  return runOf(
    Array.from({ length: 20 }, (_, index) =>
      fullyTracedRecord(index, {
        host: DECODE,
        prefillHost: PREFILL,
        decodeHost: DECODE,
        bootstrapRoom: String(1000 + index),
        ...(withPhases ? { prefillQueueTime: 0.004, prefillForwardTime: 0.02 + 0.001 * index, kvTransferTime: 0.008, decodeQueueTime: 0.002 } : {}),
      }),
    ),
  );
}

describe('a PD run in the report', () => {
  it('gets per-role tables, the pairs, the phase breakdown and KV transfer charts', () => {
    const run = pdRun(true);
    const summary = summarize(run);
    const terminal = formatTerminalSummary(run, summary);
    expect(terminal).toContain('Prefill nodes');
    expect(terminal).toContain('Decode nodes');
    expect(terminal).toMatch(/Pairs \(prefill → decode\)[\s\S]*1 of 1 possible pairs used/);
    expect(terminal).toMatch(/p50 \| [\d.]+ \| \d+ \| 4\.00 \| [\d.]+ \| 8\.00 \| 2\.00 \| [-\d.]+ \| prefill_forward_time/);
    const html = buildReportHtml(run, summary, []);
    expect(html).toContain('<h2>Prefill/decode disaggregation</h2>');
    expect(html).toContain('KV transfers over time');
    const charts = chartDefinitions(run, summary);
    const latency = charts.find((chart) => chart.name === 'pd-kv-transfer-latency');
    const line = latency?.chart.marks.find((mark) => mark.kind === 'line') as LineMark | undefined;
    expect(line?.series.map((series) => series.name)).toEqual(['KV transfer p50', 'KV transfer p99']);
    expect(line?.series[0]?.ys[0]).toBeCloseTo(8, 6);
    expect(charts.some((chart) => chart.name === 'pd-kv-transfer-volume')).toBe(true);
  });

  it('says nothing of phases while the phase columns are empty: no breakdown, no transfer chart, no phase column', () => {
    const run = pdRun(false);
    const summary = summarize(run);
    const terminal = formatTerminalSummary(run, summary);
    expect(terminal).toContain('The phase columns are empty in this run, so no phase is shown.');
    expect(terminal).not.toContain('TTFT by phase');
    expect(terminal).not.toContain('forward p50');
    expect(chartDefinitions(run, summary).some((chart) => chart.name.startsWith('pd-'))).toBe(false);
  });

  it('adds nothing to a co-located run', () => {
    const run = runOf([fullyTracedRecord(0), fullyTracedRecord(1)]);
    const summary = summarize(run);
    expect(summary.pd).toBeUndefined();
    expect(formatTerminalSummary(run, summary)).not.toContain('Prefill nodes');
  });
});
