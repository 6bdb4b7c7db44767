import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { chartDefinitions } from '../../src/report/charts/chart-specs.js';
import { buildReportHtml } from '../../src/report/html/html-reporter.js';
import { formatTerminalSummary } from '../../src/report/terminal/format-terminal-summary.js';
import { fullyTracedRecord, runOf } from '../analysis/records.js';
import { sampleRoutingRun } from './sample-run.js';

import type { BarMark, ChartModel, LineMark } from '../../src/report/charts/chart-model.js';

describe('chart specs', () => {
  const run = sampleRoutingRun();
  const charts = chartDefinitions(run, summarize(run));
  const chart = (name: string) => charts.find((candidate) => candidate.name === name);
  const model = (name: string): ChartModel => chart(name)?.chart as ChartModel;
  const firstLine = (name: string): LineMark => model(name).marks.find((mark) => mark.kind === 'line') as LineMark;
  const stageColours = (name: string): Map<string, string> => new Map(model(name).legends.flatMap((legend) => legend.entries.map((entry) => [entry.label, entry.colour] as const)));

  it('labels the ITL CDF as a fraction of inter-token gaps and the others as a fraction of requests', () => {
    expect(model('cdf-itl').y.title).toBe('fraction of inter-token gaps');
    expect(chart('cdf-itl')?.description).toContain('inter-token gaps');
    expect(model('cdf-ttft').y.title).toBe('fraction of requests');
    expect(model('cdf-ttft').x.title).toBe('TTFT (ms)');
  });

  it('colours each stage the same in the lifecycle breakdown, the request timeline and the concurrency chart', () => {
    const [lifecycle, timeline, concurrency] = ['lifecycle-breakdown', 'request-timeline', 'concurrency'].map(stageColours) as [Map<string, string>, Map<string, string>, Map<string, string>];
    const colourOf = (colours: Map<string, string>, stage: string) => [...colours].find(([name]) => name.startsWith(stage))?.[1];
    expect(colourOf(timeline, 'router queue')).toBe(colourOf(lifecycle, 'router queue'));
    expect(colourOf(timeline, 'prefill')).toBe(colourOf(lifecycle, 'prefill'));
    expect(colourOf(timeline, 'decode')).toBe(colourOf(lifecycle, 'decode'));
    expect(colourOf(timeline, 'waiting on server')).toBe(colourOf(lifecycle, 'server queue'));
    expect(colourOf(concurrency, 'waiting_in_server_queue')).toBe(colourOf(lifecycle, 'server queue'));
    expect(colourOf(concurrency, 'in_router')).toBe(colourOf(lifecycle, 'router queue'));
    expect(colourOf(lifecycle, 'decode')).toBeDefined();
    // The bars and lines are drawn in their legend's colours.
    for (const name of ['lifecycle-breakdown', 'request-timeline']) {
      const bars = model(name).marks.find((mark) => mark.kind === 'bar') as BarMark;
      expect(bars.bars.length).toBeGreaterThan(0);
      for (const bar of bars.bars) expect([...stageColours(name).values()]).toContain(bar.colour);
    }
    for (const series of firstLine('concurrency').series) expect(concurrency.get(series.name)).toBe(series.colour);
    // Distinct stages are told apart.
    expect(new Set(lifecycle.values()).size).toBe(lifecycle.size);
  });

  it('labels the simulated engine\'s tokenize stage as not modelled, and a real server\'s as measured', () => {
    const lifecycle = (definitions: ReturnType<typeof chartDefinitions>) =>
      (definitions.find((candidate) => candidate.name === 'lifecycle-breakdown')?.chart as ChartModel).legends.flatMap((legend) => legend.entries.map((entry) => entry.label));
    expect(lifecycle(charts)).toContain('tokenize (not modelled by the simulated engine)');
    expect(chart('lifecycle-breakdown')?.description).toContain('does not model tokenization');
    const real = sampleRoutingRun();
    real.info.target = 'sglang';
    expect(lifecycle(chartDefinitions(real, summarize(real)))).toContain('tokenize');
    expect(lifecycle(chartDefinitions(real, summarize(real)))).not.toContain('tokenize (not modelled by the simulated engine)');
  });

  it('labels the simulated engine\'s tokenize stage as not modelled in the terminal\'s and report.html\'s latency tables too', () => {
    expect(run.info.target).toBe('sim');
    const summary = summarize(run);
    expect(summary.latencies.tokenize_time).not.toBeNull();
    const tokenizeLine = (text: string) => text.split('\n').find((line) => line.startsWith('Tokenize'));
    expect(tokenizeLine(formatTerminalSummary(run, summary))).toMatch(/^Tokenize \(not modelled by sim\) +[\d.]+/);
    expect(buildReportHtml(run, summary, [])).toContain('<td>tokenize_time (not modelled by the simulated engine)</td>');
    const real = sampleRoutingRun();
    real.info.target = 'sglang';
    const realSummary = summarize(real);
    expect(tokenizeLine(formatTerminalSummary(real, realSummary))).toMatch(/^Tokenize +[\d.]+/);
    const realHtml = buildReportHtml(real, realSummary, []);
    expect(realHtml).toContain('<td>tokenize_time</td>');
    expect(realHtml).not.toContain('not modelled');
  });

  it('states a scraped gauge\'s sampling interval and that short queues fall between samples', () => {
    const samples = [0, 0.5, 1, 1.5, 2].map((time) => ({
      time,
      url: 'http://127.0.0.1:30001',
      ok: true,
      metrics: [{ name: 'sglang:num_queue_reqs', labels: {}, value: time === 1 ? 3 : 0 }],
    }));
    const gauge = chartDefinitions(run, summarize(run), samples).find((candidate) => candidate.name === 'server-num-queue-reqs');
    expect(gauge?.description).toContain('every 0.5 s');
    expect(gauge?.description).toContain('a queue that forms and drains between two readings never shows');
    expect(gauge?.chart.subtitle).toContain('every 0.5 s');
  });

  it('draws arrival and completion rates in bins of at least 0.5 s', () => {
    for (const name of ['offered-load', 'throughput']) {
      const times = [...new Set(firstLine(name).series.flatMap((series) => [...(series.xs as Float64Array)]))];
      expect(times.length).toBeGreaterThan(2);
      for (let index = 1; index < times.length; index++) expect((times[index] as number) - (times[index - 1] as number)).toBeGreaterThanOrEqual(0.5 - 1e-9);
    }
    // 20 req/s over 6 s: about 20 arrivals/s in each full bin, never a 50 ms spike of 40 or 60.
    const arrivals = firstLine('offered-load').series.flatMap((series) => [...(series.ys as Float64Array)]);
    expect(Math.max(...arrivals)).toBeLessThan(25);
    expect(chart('offered-load')?.description).toMatch(/in 0\.5\d* s bins/);
  });
});

describe('other measurements in report.html', () => {
  it('shows the taps’ overhead as a table and everything else as a definition list, not raw JSON', () => {
    const run = runOf([fullyTracedRecord(0), fullyTracedRecord(1)]);
    const durations = (p50Ms: number, p99Ms: number, maxMs: number) => ({ count: 42, meanMs: p50Ms, p50Ms, p99Ms, maxMs });
    run.extras = {
      taps: { matchedRecords: 40, overhead: { inboundMs: durations(0.05, 0.4, 1.25), relayMs: durations(0.2, 1.5, 3) } },
      scrape: { url: 'http://127.0.0.1:30000/metrics', samples: 12, note: '<b>' },
    };
    const html = buildReportHtml(run, summarize(run), []);
    const section = html.slice(html.indexOf('<h2>Other measurements</h2>'), html.indexOf('<h2>Charts</h2>'));
    expect(section).not.toContain('<pre>');
    expect(section).toContain('<th>p50 (ms)</th><th>p99 (ms)</th><th>max (ms)</th><th>count</th>');
    expect(section).toContain('<td>0.050</td><td>0.400</td><td>1.250</td><td>42</td>');
    expect(section).toContain('<td>0.200</td><td>1.500</td><td>3.000</td><td>42</td>');
    expect(section).toContain('<dt>matchedRecords</dt><dd>40</dd>');
    expect(section).toContain('<dt>url</dt><dd>http://127.0.0.1:30000/metrics</dd>');
    expect(section).toContain('<dd>&lt;b&gt;</dd>');
    expect(section).not.toContain('inboundMs');
  });
});

describe('comparison charts', () => {
  it('count inter-token gaps on the ITL CDF\'s axis and requests on the others', async () => {
    const { comparisonCharts } = await import('../../src/report/compare/compare-runs.js');
    const first = sampleRoutingRun();
    const charts = comparisonCharts([
      { label: 'a', run: first, summary: summarize(first) },
      { label: 'b', run: first, summary: summarize(first) },
    ] as never);
    const yTitle = (name: string) => charts.find((chart) => chart.name === name)?.chart.y.title;
    expect(yTitle('compare-cdf-itl')).toBe('fraction of inter-token gaps');
    expect(yTitle('compare-cdf-ttft')).toBe('fraction of requests');
  });
});
