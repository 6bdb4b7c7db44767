import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import type { BarMark, ChartModel, LineMark } from '../../src/report/charts/chart-model.js';
import { chartDefinitions } from '../../src/report/charts/chart-specs.js';
import { renderSvg } from '../../src/report/charts/render-chart.js';
import { comparisonRows, writeComparison, type ComparedRun } from '../../src/report/compare/compare-runs.js';
import { parseCsv } from '../../src/report/csv/csv-format.js';
import { buildReportHtml } from '../../src/report/html/html-reporter.js';
import { NODES_CSV, nodesReporter } from '../../src/report/nodes/nodes-reporter.js';
import { formatTerminalSummary } from '../../src/report/terminal/format-terminal-summary.js';
import type { RunData } from '../../src/types/run.js';
import { T0, fullyTracedRecord, runOf } from '../analysis/records.js';
import { sampleRoutingRun } from './sample-run.js';

/** The sample routing run with its servers listed in reverse: the records name node 2 first, then node 1, node 0. */
function reverseIndexedRun(): RunData {
  const run = sampleRoutingRun();
  run.extras = { cluster: { serverUrls: ['http://127.0.0.1:30003', 'http://127.0.0.1:30002', 'http://127.0.0.1:30001'], routerUrl: 'http://127.0.0.1:30000' } };
  return run;
}

/** A routing run over `nodes` servers, round-robin, with their index the order of their ports. */
function manyNodeRun(nodes: number): RunData {
  const hosts = Array.from({ length: nodes }, (_, index) => `http://127.0.0.1:${31000 + index}`);
  const records = Array.from({ length: nodes * 20 }, (_, index) => fullyTracedRecord(index * 0.01, { host: hosts[index % nodes] as string, finishTime: index * 0.01 + 0.3 + (index % nodes) * 0.01 }));
  const run = runOf(records, { testLevel: 'routing', requestRate: 100, runId: 'many-nodes' });
  run.extras = { cluster: { serverUrls: hosts, routerUrl: 'http://127.0.0.1:30000' } };
  return run;
}

describe('report.html reads as it should', () => {
  it('lists nodes in index order in the nodes table, nodes.csv, the terminal summary and the requests-per-node chart', async () => {
    const run = reverseIndexedRun();
    const summary = summarize(run);
    // The summary lists them as the records first named them: the order the reader must not see.
    expect(summary.routing?.nodes.map((node) => node.node)).toEqual([2, 1, 0]);
    const html = buildReportHtml(run, summary, []);
    const nodesTable = html.slice(html.indexOf('<h2>Nodes</h2>'));
    const rowNodes = [...nodesTable.matchAll(/<tr><td>(\d)<\/td><td>http/g)].map((match) => match[1]);
    expect(rowNodes).toEqual(['0', '1', '2']);
    const directory = await mkdtemp(join(tmpdir(), 'servelab-nodes-order-'));
    try {
      await nodesReporter.write({ run, summary, outputDirectory: directory } as Parameters<typeof nodesReporter.write>[0]);
      const rows = parseCsv(await readFile(join(directory, NODES_CSV), 'utf8'));
      expect(rows.slice(1).map((row) => row[0])).toEqual(['0', '1', '2']);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
    const terminalNodes = [...formatTerminalSummary(run, summary).matchAll(/^node (\d) http/gm)].map((match) => match[1]);
    expect(terminalNodes).toEqual(['0', '1', '2']);
    const share = chartDefinitions(run, summary).find((chart) => chart.name === 'node-share')?.chart as ChartModel;
    expect(share.y.kind === 'band' ? share.y.categories : []).toEqual(['node 0', 'node 1', 'node 2']);
  });

  it('draws a chart of many nodes as the spread across nodes and the worst few named, not one line each', () => {
    const run = manyNodeRun(16);
    const inFlight = chartDefinitions(run, summarize(run)).find((chart) => chart.name === 'node-in-flight')?.chart as ChartModel;
    const names = (inFlight.marks.find((mark) => mark.kind === 'line') as LineMark).series.map((series) => series.name);
    expect(names.length).toBeLessThanOrEqual(5);
    expect(names).toContain('median of 16 nodes');
    expect(names).toContain('p90 of 16 nodes');
    // The slowest nodes (the highest ports finish last here) are the ones named.
    expect(names.filter((name) => name.startsWith('node 1'))).toHaveLength(3);
    expect(inFlight.legends[0]?.entries.length).toBe(names.length);
    // A few nodes still get a line each, in index order.
    const few = manyNodeRun(3);
    const fewChart = chartDefinitions(few, summarize(few)).find((chart) => chart.name === 'node-in-flight')?.chart as ChartModel;
    expect((fewChart.marks.find((mark) => mark.kind === 'line') as LineMark).series.map((series) => series.name)).toEqual(['node 0', 'node 1', 'node 2']);
  });

  it('breaks TTFT down by its stages apart from decode', () => {
    const run = sampleRoutingRun();
    const ttft = chartDefinitions(run, summarize(run)).find((chart) => chart.name === 'ttft-breakdown')?.chart as ChartModel;
    const stages = ttft.legends.flatMap((legend) => legend.entries.map((entry) => entry.label));
    expect(stages).toEqual(['router queue', 'network', 'tokenize (not modelled by the simulated engine)', 'server queue', 'prefill', 'first token to client']);
    // Each band's bars end at about its mean TTFT (50 ms in the sample), not at its end-to-end latency.
    const bars = (ttft.marks[0] as BarMark).bars;
    expect(Math.max(...bars.map((bar) => bar.endX))).toBeCloseTo(49, 0);
  });

  it('puts the queue-sampling caveat on the queue chart only', () => {
    const run = sampleRoutingRun();
    const samples = [0, 0.5, 1, 1.5, 2].map((time) => ({
      time,
      url: 'http://127.0.0.1:30001/metrics',
      ok: true,
      metrics: [
        { name: 'sglang:num_queue_reqs', labels: {}, value: time === 1 ? 3 : 0 },
        { name: 'sglang:num_running_reqs', labels: {}, value: 5 },
        { name: 'sglang:token_usage', labels: {}, value: 0.4 },
      ],
    }));
    const charts = chartDefinitions(run, summarize(run), samples);
    const byName = (name: string) => charts.find((chart) => chart.name === name);
    expect(byName('server-num-queue-reqs')?.chart.subtitle).toContain('a queue that forms and drains');
    for (const name of ['server-num-running-reqs', 'server-token-usage']) {
      expect(byName(name)).toBeDefined();
      expect(byName(name)?.chart.subtitle).toBeUndefined();
      expect(byName(name)?.description).not.toContain('queue');
    }
    // The scraped server is named by its node index, as everywhere else.
    expect((byName('server-num-running-reqs')?.chart.marks[0] as LineMark).series.map((series) => series.name)).toEqual(['node 0']);
  });

  it('keeps the verdict rule apart from the verdict, under its own heading', () => {
    const run = sampleRoutingRun();
    const html = buildReportHtml(run, summarize(run), []);
    const verdict = html.slice(html.indexOf('<section class="verdict'), html.indexOf('</section>', html.indexOf('<section class="verdict')));
    expect(verdict).not.toMatch(/<p[^>]*>Saturated:/);
    expect(verdict).toMatch(/<details[^>]*><summary>How the verdict is judged<\/summary><p>A run is judged SATURATED when/);
  });

  it('prints no in_router stage for a node test, which has no router', () => {
    const run = runOf(Array.from({ length: 40 }, (_, index) => fullyTracedRecord(index * 0.1)), { runId: 'node-run', requestRate: 10 });
    const summary = summarize(run);
    expect(buildReportHtml(run, summary, [])).not.toContain('<td>in_router</td>');
    expect(formatTerminalSummary(run, summary)).not.toContain('in_router');
    const routing = sampleRoutingRun();
    expect(buildReportHtml(routing, summarize(routing), [])).toContain('<td>in_router</td>');
  });
});

describe('event labels on time charts', () => {
  const textsOf = (svg: string): { x: number; y: number; text: string }[] =>
    [...svg.matchAll(/<text x="([\d.]+)" y="([\d.]+)" fill="#c0392b">([^<]+)<\/text>/g)].map((match) => ({ x: Number(match[1]), y: Number(match[2]), text: match[3] as string }));

  it('stacks close events at distinct heights instead of printing them over each other', () => {
    const run = sampleRoutingRun();
    // Crash and restore 0.3 s apart on a 6 s axis: their labels would overlap on one line.
    run.events = [{ time: T0 + 2, kind: 'crash', node: 1 }, { time: T0 + 2.3, kind: 'restore', node: 1 }, { time: T0 + 5, kind: 'crash', node: 2 }];
    const throughput = chartDefinitions(run, summarize(run)).find((chart) => chart.name === 'throughput')?.chart as ChartModel;
    const labels = textsOf(renderSvg(throughput));
    expect(labels.map((label) => label.text)).toEqual(['crash node 1', 'restore node 1', 'crash node 2']);
    expect(labels[1]?.y).toBeGreaterThan(labels[0]?.y as number);
    // One far enough away goes back to the first line.
    expect(labels[2]?.y).toBe(labels[0]?.y);
  });
});

describe('servelab compare', () => {
  let directory: string;
  let runs: ComparedRun[];
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'servelab-compare-reads-'));
    const first = reverseIndexedRun();
    const second = sampleRoutingRun();
    // Half the prompt tokens cached on every request of the second run.
    for (const record of second.records) if (record.actualPromptTokens !== undefined) record.cachedTokens = record.actualPromptTokens / 2;
    runs = [
      { label: 'a', run: first, summary: summarize(first) },
      { label: 'b', run: second, summary: summarize(second) },
    ];
    await writeComparison(runs, directory);
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('has the aggregate cache-hit ratio over all nodes', async () => {
    const row = comparisonRows(runs).find((candidate) => candidate.metric === 'cache hit ratio (all nodes)');
    expect(row?.unit).toBe('');
    expect(row?.values[1]).toBeCloseTo(0.5, 9);
    // Every succeeded request of the sample caches 40 of its 100 prompt tokens.
    expect(row?.values[0]).toBeCloseTo(0.4, 9);
    const csv = parseCsv(await readFile(join(directory, 'compare.csv'), 'utf8'));
    expect(csv.find((line) => line[0] === 'cache hit ratio (all nodes)')?.slice(1, 3)).toEqual(['', '0.4']);
  });

  it('writes compare-nodes.csv in ms like compare.csv, nodes in index order', async () => {
    const [header, ...rows] = parseCsv(await readFile(join(directory, 'compare-nodes.csv'), 'utf8'));
    expect(header).toContain('ttft_p50_ms');
    expect(header).not.toContain('ttft_p50');
    const column = (name: string) => (header as string[]).indexOf(name);
    const firstRun = rows.filter((row) => row[0] === 'a');
    expect(firstRun.map((row) => row[column('node')])).toEqual(['0', '1', '2']);
    const node0 = runs[0]?.summary.routing?.nodes.find((node) => node.node === 0);
    expect(Number(firstRun[0]?.[column('ttft_p50_ms')])).toBeCloseTo((node0?.ttft?.p50 as number) * 1000, 6);
    const ttftP50 = comparisonRows(runs).find((row) => row.metric === 'ttft p50');
    expect(ttftP50?.unit).toBe('ms');
  });

  it('marks a virtual-time run in the table, compare.csv and compare.html', async () => {
    const real = sampleRoutingRun();
    const simulated = sampleRoutingRun();
    simulated.info.simulated = true;
    const marked: ComparedRun[] = [
      { label: 'measured', run: real, summary: summarize(real) },
      { label: 'twin', run: simulated, summary: summarize(simulated) },
    ];
    const markedDirectory = join(directory, 'marked');
    await writeComparison(marked, markedDirectory);
    expect(comparisonRows(marked).find((row) => row.metric === 'time')?.values).toEqual(['real', 'virtual']);
    const csv = parseCsv(await readFile(join(markedDirectory, 'compare.csv'), 'utf8'));
    expect(csv.find((line) => line[0] === 'time')?.slice(2, 4)).toEqual(['real', 'virtual']);
    const html = await readFile(join(markedDirectory, 'compare.html'), 'utf8');
    expect(html).toContain('<th>twin <small>(virtual time)</small></th>');
    expect(html).toContain('<th>measured</th>');
  });
});
