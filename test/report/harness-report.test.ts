import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { regenerateReport } from '../../src/report/regenerate.js';
import { assessHarness, HARNESS_THRESHOLDS } from '../../src/analysis/harness.js';
import { harnessGradeText } from '../../src/report/harness-text.js';
import { buildReportHtml } from '../../src/report/html/html-reporter.js';
import { formatTerminalSummary } from '../../src/report/terminal/format-terminal-summary.js';
import { writeRunFiles } from '../../src/report/write-run-files.js';
import type { HarnessMeasurements, ProcessHealth } from '../../src/types/harness.js';
import type { RunData } from '../../src/types/run.js';
import { sampleRoutingRun } from './sample-run.js';

let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-harness-report-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

/** A hand-made self-report well inside every threshold, unless overridden. */
function health(overrides: Partial<ProcessHealth> = {}): ProcessHealth {
  return { pid: 1, event_loop_delay_ms: { p50: 0.05, p99: 0.4, max: 2, samples: 10_000 }, cpu_s: 1, wall_s: 10, cpu_share_of_one_core: 0.1, ...overrides };
}

/** The sample routing run (three nodes) with these self-reports of its client, router and second node. */
function runWithHarness(routerDelayP99Ms: number): RunData {
  const run = sampleRoutingRun();
  const measurements: HarnessMeasurements = {
    processes: [
      { name: 'client', role: 'client', ...health() },
      { name: 'router', role: 'router', ...health({ event_loop_delay_ms: { p50: 0.1, p99: routerDelayP99Ms, max: 40, samples: 9_000 } }) },
      { name: 'node-1', role: 'sim-server', node: 'http://127.0.0.1:30002', ...health({ event_loop_delay_ms: null }), step_lateness_ms: { p50: 0.05, p99: 0.3, max: 1, steps: 500 } },
    ],
    host_cpu: { cores: 2, samples: 40, interval_ms: 250, busy_share_mean: 0.4, busy_share_max: 0.7, share_of_samples_over_threshold: 0 },
    missing: ['taps: does not report on itself yet (not checked)'],
  };
  run.extras = { ...run.extras, harness: measurements };
  return run;
}

describe('the harness report in summary.json, the terminal and report.html', () => {
  it('a run whose relay was slow is suspect: its error bound is 8.6% of TTFT, the metrics are named with their bounds, the router is named as the cause', () => {
    const run = runWithHarness(3.5);
    const summary = summarize(run);
    expect(Object.keys(summary).slice(0, 2)).toEqual(['verdict', 'harness']);
    expect(summary.harness?.state).toBe('suspect');
    // The client's send lag comes from the records (the sample run's requests leave 1 ms late: at the threshold, not over).
    expect(summary.harness?.processes.find((process) => process.name === 'client')?.send_lag_p99_ms).toBeCloseTo(1, 3);
    const lines = formatTerminalSummary(run, summary).split('\n');
    // TTFT: client 0.4 + router 3.5 + node-1 0.3 = 4.2 ms of its 49 ms p50.
    const harnessLine = lines.findIndex((line) =>
      /^Harness: +SUSPECT: error bound over 5% of ttft \(8\.57%\), queue_time_in_router \(195%\), network_time \(380%\), tokenize_time \(15\.0%\), itl \(21\.0%\); TTFT or E2E among them \(watched: client, router, node-1, host CPU\)$/.test(line),
    );
    expect(harnessLine).toBeGreaterThan(1);
    expect(harnessLine).toBeLessThan(lines.findIndex((line) => line.startsWith('Status:')));
    expect(lines[harnessLine + 1]).toMatch(/^ {2}router: event-loop delay p99 3\.50 ms > 1 ms \(max 40\.0 ms\); affects queue_time_in_router, /);
    expect(lines[harnessLine + 2]).toBe('  not checked (no self-report yet): taps');
    expect(lines.find((line) => line.startsWith('Queue in router'))).toMatch(/\[harness ±0\.150 ms at p50, ±3\.90 ms at p99 \(195%\) from client, router\]$/);
    expect(lines.find((line) => line.startsWith('Prefill'))).not.toContain('[harness');
    expect(lines.find((line) => line.startsWith('E2E latency'))).not.toContain('[harness');
    expect(lines.find((line) => line.includes('http://127.0.0.1:30002'))).toMatch(/\[harness: client, router, node-1\]$/);
    const html = buildReportHtml(run, summary, []);
    // Every metric's bound stands beside it in the latency table, affected or not.
    expect(html).toContain('±0.200 ms at p50, ±4.20 ms at p99 (0.98%)');
    expect(html).toContain('<h2>Harness: SUSPECT</h2>');
    expect(html.indexOf('<h2>Harness: SUSPECT</h2>')).toBeLessThan(html.indexOf('<h2>Overview</h2>'));
    expect(html.indexOf('<h2>Verdict: ')).toBeLessThan(html.indexOf('<h2>Harness: SUSPECT</h2>'));
    expect(html).toContain('router: event-loop delay p99 3.50 ms &gt; 1 ms');
    // Shown once, assessed: not again as a raw "Other measurements" entry.
    expect(html).not.toMatch(/<dt>harness<\/dt>/);
  });

  it('the same run with a quick relay is affected only where its ~1 ms stages are, and TTFT and E2E are not', () => {
    const run = runWithHarness(0.4);
    const summary = summarize(run);
    expect(summary.harness?.state).toBe('affected');
    expect(summary.harness?.affected).toEqual(['queue_time_in_router', 'network_time', 'tokenize_time', 'itl']);
    const text = formatTerminalSummary(run, summary);
    expect(text).toMatch(/\nHarness: +AFFECTED: error bound over 5% of queue_time_in_router \(40\.0%\), network_time \(70\.0%\), tokenize_time \(15\.0%\), itl \(5\.50%\); not TTFT or E2E \(watched: client, router, node-1, host CPU\)\n/);
    expect(text).not.toMatch(/TTFT .*\[harness/);
    expect(buildReportHtml(run, summary, [])).toContain('<h2>Harness: AFFECTED</h2>');
  });

  it('is clean with a quiet harness, and says nothing of the processes over a raw threshold then', () => {
    const run = runWithHarness(0.05);
    const measurements = run.extras?.['harness'] as HarnessMeasurements;
    measurements.processes = measurements.processes.map((process) => ({
      ...process,
      event_loop_delay_ms: process.event_loop_delay_ms === null ? null : { p50: 0.01, p99: 0.02, max: 0.2, samples: 9_000 },
      ...(process.step_lateness_ms === undefined ? {} : { step_lateness_ms: { p50: 0.01, p99: 0.02, max: 0.1, steps: 500 }, cpu_share_of_one_core: 0.97 }),
    }));
    const summary = summarize(run);
    expect(summary.harness?.state).toBe('clean');
    // node-1 ran at 97% of a core (over the raw threshold), but its lateness moved nothing by 5%.
    expect(summary.harness?.warnings.map((warning) => warning.process)).toEqual(['node-1']);
    const text = formatTerminalSummary(run, summary);
    expect(text).toMatch(/\nHarness: +CLEAN: error bound within 5% of every metric it affects \(watched: client, router, node-1, host CPU\)\n/);
    expect(text).not.toContain('[harness');
    expect(text).not.toContain('CPU 97% of one core');
    expect(buildReportHtml(run, summary, [])).toContain('<h2>Harness: CLEAN</h2>');
  });

  it('has no harness block where the run did not watch itself', () => {
    const run = sampleRoutingRun();
    const summary = summarize(run);
    expect(summary.harness).toBeUndefined();
    expect(formatTerminalSummary(run, summary)).not.toContain('Harness:');
  });

  it('summary.json carries it, and servelab report DIR assesses it again from the measurements', async () => {
    const run = runWithHarness(3.5);
    const outputDirectory = join(workDirectory, 'routing');
    await writeRunFiles(run, summarize(run), outputDirectory, ['summary', 'jsonl', 'config']);
    const file = JSON.parse(await readFile(join(outputDirectory, 'summary.json'), 'utf8')) as { metrics: Record<string, unknown>; extras: Record<string, unknown> };
    expect(Object.keys(file.metrics).slice(0, 2)).toEqual(['verdict', 'harness']);
    expect((file.metrics['harness'] as { state: string }).state).toBe('suspect');
    const regenerated = await regenerateReport(outputDirectory, { reporterNames: ['summary'] });
    expect(regenerated.summary.harness?.state).toBe('suspect');
    expect(regenerated.summary.harness?.warnings.map((warning) => warning.process)).toEqual(['router']);
  });

  it('says ">1000%" for a metric far below the harness resolution, rather than an absurd figure', () => {
    const processes = [{ name: 'client', role: 'client' as const, ...health({ event_loop_delay_ms: { p50: 0.1, p99: 20, max: 40, samples: 9_000 } }) }];
    const report = assessHarness({ processes, host_cpu: null, missing: [] }, HARNESS_THRESHOLDS, { p50Ms: { itl: 0.004, ttft: 800, total_latency: 5000 } });
    expect(report.errorBounds['itl']?.share).toBeCloseTo(5000, 6);
    expect(harnessGradeText(report)).toBe('error bound over 5% of itl (>1000%); not TTFT or E2E');
  });
});
