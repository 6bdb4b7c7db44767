import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { chartDefinitions } from '../../src/report/charts/chart-specs.js';
import { buildReportHtml } from '../../src/report/html/html-reporter.js';
import { fullyTracedRecord, runOf } from '../analysis/records.js';
import { sampleRoutingRun } from './sample-run.js';

interface LayerSpec {
  data?: { values: { time: number; value: number; series: string }[] };
  encoding?: { y?: { title?: string } };
}

describe('chart specs', () => {
  const run = sampleRoutingRun();
  const charts = chartDefinitions(run, summarize(run));
  const chart = (name: string) => charts.find((candidate) => candidate.name === name);
  const firstLayer = (name: string) => ((chart(name)?.spec as { layer: LayerSpec[] }).layer[0] as LayerSpec);

  it('labels the ITL CDF as a fraction of inter-token gaps and the others as a fraction of requests', () => {
    expect(firstLayer('cdf-itl').encoding?.y?.title).toBe('fraction of inter-token gaps');
    expect(chart('cdf-itl')?.description).toContain('inter-token gaps');
    expect(firstLayer('cdf-ttft').encoding?.y?.title).toBe('fraction of requests');
  });

  it('draws arrival and completion rates in bins of at least 0.5 s', () => {
    for (const name of ['offered-load', 'throughput']) {
      const times = [...new Set((firstLayer(name).data?.values ?? []).map((row) => row.time))];
      expect(times.length).toBeGreaterThan(2);
      for (let index = 1; index < times.length; index++) expect((times[index] as number) - (times[index - 1] as number)).toBeGreaterThanOrEqual(0.5 - 1e-9);
    }
    // 20 req/s over 6 s: about 20 arrivals/s in each full bin, never a 50 ms spike of 40 or 60.
    const arrivals = (firstLayer('offered-load').data?.values ?? []).map((row) => row.value);
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
