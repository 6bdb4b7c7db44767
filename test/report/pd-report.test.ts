import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { chartDefinitions } from '../../src/report/charts/chart-specs.js';
import { buildReportHtml } from '../../src/report/html/html-reporter.js';
import { formatTerminalSummary } from '../../src/report/terminal/format-terminal-summary.js';
import type { LineMark } from '../../src/report/charts/chart-model.js';
import { fullyTracedRecord, runOf } from '../analysis/records.js';
import type { StoredSample } from '../../src/scrape/server-metrics-file.js';

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

  it("shows the stages across both servers: the decode server's wait for the KV is no tokenize, and prefill is the prefill server's", () => {
    // As the decode server stamps a PD request: received at 0.004, its waiting queue entered only once the KV arrived
    // (0.040), its prebuilt first step at once (forward entry = first token): no prefill ran there.
    const run = runOf(
      Array.from({ length: 20 }, (_, index) =>
        fullyTracedRecord(index, {
          host: DECODE,
          prefillHost: PREFILL,
          decodeHost: DECODE,
          bootstrapRoom: String(2000 + index),
          queueTimeStart: index + 0.04,
          queueTimeEnd: index + 0.042,
          serverFirstTokenTime: index + 0.042,
          prefillQueueTime: 0.004,
          prefillForwardTime: 0.025,
          kvTransferTime: 0.006,
          kvTransferWaitTime: 0.031,
          decodeQueueTime: 0.002,
        }),
      ),
    );
    const summary = summarize(run);
    expect(summary.latencies.tokenize_time).toBeNull();
    expect(summary.latencies.prefill_time?.p50).toBeCloseTo(0.025, 6);
    expect(summary.pd?.stages?.kv_transfer_time?.p50).toBeCloseTo(0.006, 6);
    const terminal = formatTerminalSummary(run, summary);
    expect(terminal).not.toMatch(/Tokenize/);
    expect(terminal).toMatch(/Prefill \(prefill srv forward\) +25\.00 +25\.00 +25\.00/);
    expect(terminal).toMatch(/Prefill srv queue +4\.00/);
    expect(terminal).toMatch(/KV transfer \(prefill to decode\) +6\.00/);
    expect(terminal).toMatch(/Decode srv wait for KV +31\.00/);
    expect(terminal).toMatch(/Decode srv queue \(KV arrived\) +2\.00/);
    const html = buildReportHtml(run, summary, []);
    expect(html).not.toContain('<td>tokenize_time');
    expect(html).toMatch(/<td>prefill_time \(prefill server&#39;s forward[^<]*<\/td><td>20<\/td><td>25\.000?/);
    expect(html).toMatch(/<td>kv_transfer_wait_time \(decode server: [^<]*<\/td>/);
    // The charts stack the prefill half where the decode server waited for it, none of it as tokenize.
    const breakdown = chartDefinitions(run, summary).find((chart) => chart.name === 'ttft-breakdown');
    const legend = breakdown?.chart.legends?.[0]?.entries.map((entry) => entry.label) ?? [];
    expect(legend).toEqual(expect.arrayContaining(['prefill server queue', 'prefill (prefill server)', 'KV transfer', 'first decode step']));
    expect(legend.some((label) => label.startsWith('tokenize'))).toBe(false);
  });

  it('adds nothing to a co-located run', () => {
    const run = runOf([fullyTracedRecord(0), fullyTracedRecord(1)]);
    const summary = summarize(run);
    expect(summary.pd).toBeUndefined();
    expect(formatTerminalSummary(run, summary)).not.toContain('Prefill nodes');
  });
});

describe("a PD server's scraped KV transfer histograms", () => {
  /** One scrape of a server at `time` s with its counters (names given in full, so either prefix). */
  function scrape(url: string, time: number, counters: Record<string, number>): StoredSample {
    return { time, url, ok: true, metrics: Object.entries(counters).map(([name, value]) => ({ name, labels: { tp_rank: '0' }, value })) };
  }

  it('are charted per server under either prefix: mean latency per interval and MB per second, none across a reset', () => {
    const samples = [
      scrape('http://127.0.0.1:1', 0, { 'sglang:kv_transfer_latency_ms_sum': 0, 'sglang:kv_transfer_latency_ms_count': 0, 'sglang:kv_transfer_total_mb_sum': 0 }),
      scrape('http://127.0.0.1:1', 0.5, { 'sglang:kv_transfer_latency_ms_sum': 30, 'sglang:kv_transfer_latency_ms_count': 3, 'sglang:kv_transfer_total_mb_sum': 384 }),
      scrape('http://127.0.0.1:1', 1, { 'sglang:kv_transfer_latency_ms_sum': 30, 'sglang:kv_transfer_latency_ms_count': 3, 'sglang:kv_transfer_total_mb_sum': 384 }),
      scrape('http://127.0.0.1:2', 0, { sglang_kv_transfer_latency_ms_sum: 100, sglang_kv_transfer_latency_ms_count: 4, sglang_kv_transfer_total_mb_sum: 1000 }),
      scrape('http://127.0.0.1:2', 0.5, { sglang_kv_transfer_latency_ms_sum: 148, sglang_kv_transfer_latency_ms_count: 6, sglang_kv_transfer_total_mb_sum: 1256 }),
      // Restarted: its counters start again, and that interval says nothing.
      scrape('http://127.0.0.1:2', 1, { sglang_kv_transfer_latency_ms_sum: 5, sglang_kv_transfer_latency_ms_count: 1, sglang_kv_transfer_total_mb_sum: 10 }),
    ];
    const run = pdRun(false);
    const charts = chartDefinitions(run, summarize(run), samples);
    const lines = (name: string) => (charts.find((chart) => chart.name === name)?.chart.marks.find((mark) => mark.kind === 'line') as LineMark | undefined)?.series ?? [];
    const latency = lines('pd-kv-transfer-latency-scraped');
    expect(latency.map((series) => series.name)).toEqual(['http://127.0.0.1:1', 'http://127.0.0.1:2']);
    // Server 1: 30 ms over 3 transfers, then no transfer (no point); server 2: 48 ms over 2, then a reset (no point).
    expect(Array.from(latency[0]?.ys ?? [])).toEqual([10]);
    expect(Array.from(latency[1]?.ys ?? [])).toEqual([24]);
    const volume = lines('pd-kv-transfer-throughput-scraped');
    expect(Array.from(volume[0]?.ys ?? [])).toEqual([768, 0]);
    expect(Array.from(volume[1]?.ys ?? [])).toEqual([512]);
  });
});
