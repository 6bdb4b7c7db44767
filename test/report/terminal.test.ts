import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { formatTerminalSummary } from '../../src/report/terminal/format-terminal-summary.js';
import { fullyTracedRecord, recordAt, runOf } from '../analysis/records.js';

describe('terminal summary', () => {
  const run = runOf([
    fullyTracedRecord(0),
    fullyTracedRecord(1),
    recordAt({ scheduledTime: 2, arrivalTime: 2.0001, success: false, error: 'timeout' }),
  ]);
  const summary = summarize(run, { slo: { ttftMs: 100 } });

  it('shows status, counts with error classes, rates, latencies in ms, goodput and the output directory', () => {
    const text = formatTerminalSummary(run, summary, { outputDirectory: '/tmp/results/test-run' });
    expect(text).toMatch(/Status:\s+completed/);
    expect(text).toMatch(/Requests ok \/ failed:\s+2 \/ 1 \(timeout 1\)/);
    expect(text).toMatch(/Duration \(s\):\s+1\.25/); // 0.001 to 1.25
    expect(text).toMatch(/TTFT\s+49\.00\s+49\.00\s+49\.00/);
    expect(text).toMatch(/TPOT\s+20\.00/);
    expect(text).toMatch(/Goodput \(req\/s\):\s+1\.60 \(66\.7% meet ttft <= 100 ms\)/);
    expect(text).toMatch(/Output directory:\s+\/tmp\/results\/test-run/);
    expect(text).not.toContain('\u001b[');
  });

  it('lists each event with its failures and throughput before and after', async () => {
    const { sampleRoutingRun } = await import('./sample-run.js');
    const routing = sampleRoutingRun();
    const text = formatTerminalSummary(routing, summarize(routing));
    expect(text).toMatch(/crash node 1 at 3\.00 s:\s+13 failed over 1\.86 s; completed\/s \d+\.\d\d -> \d+\.\d\d/);
  });

  it('shows the tracing taps\' own overhead when the run had taps', async () => {
    const { sampleRoutingRun } = await import('./sample-run.js');
    const routing = sampleRoutingRun();
    const durations = (p50Ms: number, p99Ms: number) => ({ count: 10, meanMs: p50Ms, p50Ms, p99Ms, maxMs: p99Ms });
    routing.extras = { taps: { matchedRecords: 10, overhead: { inboundMs: durations(0.05, 0.4), relayMs: durations(0.2, 1.5) } } };
    expect(formatTerminalSummary(routing, summarize(routing))).toMatch(/Tap overhead p50 \/ p99 \(ms\):\s+in 0\.050 \/ 0\.400, relay 0\.200 \/ 1\.500/);
    expect(formatTerminalSummary(run, summary)).not.toContain('Tap overhead');
  });

  it("names harness_limit failures as servelab's own limit, not the server's", () => {
    const limited = runOf([fullyTracedRecord(0), recordAt({ scheduledTime: 1, success: false, error: 'harness_limit' })]);
    const text = formatTerminalSummary(limited, summarize(limited));
    expect(text).toMatch(/Requests ok \/ failed:\s+1 \/ 1 \(harness_limit 1: servelab's own limit, not the server\)/);
  });

  it('colors only when asked', () => {
    expect(formatTerminalSummary(run, summary, { color: true })).toContain('\u001b[32mcompleted');
  });
});

describe('terminal number formatting', () => {
  it('never prints a negative zero for a tiny negative duration', async () => {
    const { recordAt } = await import('../analysis/records.js');
    // Server clock readings a fraction of a microsecond apart: tokenize_time is about -1e-7 s.
    const run = runOf([fullyTracedRecord(0, { queueTimeStart: undefined }), recordAt({ scheduledTime: 0, arrivalTime: 0, serverCreatedTime: 0.5, queueTimeStart: 0.4999997, finishTime: 1 })]);
    run.info.target = 'sglang'; // a real server's clock (the simulated engine's tokenize row says "not modelled")
    const text = formatTerminalSummary(run, summarize(run));
    expect(text).toMatch(/Tokenize\s+0\.000/);
    expect(text).not.toContain('-0.000');
  });
});
