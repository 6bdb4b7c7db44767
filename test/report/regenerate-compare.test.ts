import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { registerCompareCommand } from '../../src/cli/commands/compare.js';
import { registerReportCommand } from '../../src/cli/commands/report.js';
import { isServelabError } from '../../src/errors/servelab-error.js';
import { parseCsv } from '../../src/report/csv/csv-format.js';
import { DATA_REPORTER_NAMES } from '../../src/report/registry.js';
import { regenerateReport } from '../../src/report/regenerate.js';
import { readRunDirectory } from '../../src/report/run-directory.js';
import { writeRunFiles } from '../../src/report/write-run-files.js';
import type { Summary } from '../../src/types/summary.js';
import { fullyTracedRecord, runOf } from '../analysis/records.js';
import { sampleRoutingRun } from './sample-run.js';

async function runCli(register: (program: Command) => void, argv: string[]): Promise<string> {
  const program = new Command('servelab').exitOverride();
  register(program);
  const chunks: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  });
  try {
    await program.parseAsync(['node', 'servelab', ...argv]);
  } finally {
    spy.mockRestore();
  }
  return chunks.join('');
}

describe('servelab report and compare', () => {
  let root: string;
  let routingDirectory: string;
  let nodeDirectory: string;
  let routingSummary: Summary;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'servelab-regenerate-'));
    routingDirectory = join(root, 'routing');
    nodeDirectory = join(root, 'node');
    const routing = sampleRoutingRun();
    routingSummary = summarize(routing, { slo: { ttftMs: 60 } });
    await writeRunFiles(routing, routingSummary, routingDirectory, DATA_REPORTER_NAMES);
    const node = runOf(Array.from({ length: 30 }, (_, index) => fullyTracedRecord(index * 0.1)), { runId: 'node-run', requestRate: 10 });
    await writeRunFiles(node, summarize(node), nodeDirectory, DATA_REPORTER_NAMES);
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('reads a run directory back into the same run', async () => {
    const loaded = await readRunDirectory(routingDirectory);
    expect(loaded.run.info.runId).toBe('sample-routing');
    expect(loaded.run.records).toHaveLength(120);
    expect(loaded.run.events.map((event) => event.kind)).toEqual(['crash', 'restore']);
    const again = summarize(loaded.run, { slo: { ttftMs: 60 } });
    expect(again.counts).toEqual(routingSummary.counts);
    expect(again.latencies.ttft?.p99).toBeCloseTo(routingSummary.latencies.ttft?.p99 as number, 6);
    expect(again.goodput?.goodRequests).toBe(routingSummary.goodput?.goodRequests);
    expect(again.routing?.nodes.map((node) => node.requests)).toEqual(routingSummary.routing?.nodes.map((node) => node.requests));
  });

  it('regenerates every file from the data, keeping the run’s own SLOs', async () => {
    await rm(join(routingDirectory, 'requests.csv'));
    const { summary, written } = await regenerateReport(routingDirectory);
    expect(summary.goodput?.slo).toEqual({ ttftMs: 60 });
    const files = await readdir(routingDirectory);
    for (const file of ['requests.csv', 'timeseries.csv', 'nodes.csv', 'report.html', 'summary.json', 'charts']) expect(files).toContain(file);
    expect(written.some((path) => path.endsWith('.png'))).toBe(true);
  });

  it('runs as `servelab report DIR` and prints the summary', async () => {
    const output = await runCli(registerReportCommand, ['report', nodeDirectory, '--reporters', 'csv,summary', '--slo', 'total=300']);
    expect(output).toMatch(/Requests ok \/ failed:\s+30 \/ 0/);
    expect(output).toMatch(/Goodput \(req\/s\):.*100\.0% meet total <= 300 ms/);
    expect(output).toContain(`wrote ${join(nodeDirectory, 'requests.csv')}`);
  });

  it('refuses a charts/ that is a symbolic link before writing anything, and writes nothing through it', async () => {
    const linked = join(root, 'linked-charts');
    const elsewhere = join(root, 'elsewhere');
    const run = runOf(Array.from({ length: 5 }, (_, index) => fullyTracedRecord(index * 0.1)), { runId: 'linked-run', requestRate: 10 });
    await writeRunFiles(run, summarize(run), linked, DATA_REPORTER_NAMES);
    await mkdir(elsewhere);
    await symlink(elsewhere, join(linked, 'charts'));
    const before = await readFile(join(linked, 'summary.json'), 'utf8');
    const refused = await regenerateReport(linked).catch((error: unknown) => error);
    expect(isServelabError(refused) && refused.code).toBe('INVALID_RUN_DIRECTORY');
    expect((refused as Error).message).toMatch(/charts is a symbolic link \(to .*elsewhere\).*remove the link/);
    expect(await readdir(elsewhere)).toEqual([]);
    expect(await readFile(join(linked, 'summary.json'), 'utf8')).toBe(before);
  });

  it('refuses an incomplete directory or one of another format version, naming what is wrong', async () => {
    const incomplete = join(root, 'incomplete');
    await writeRunFiles(runOf([fullyTracedRecord(0)]), summarize(runOf([fullyTracedRecord(0)])), incomplete, ['summary']);
    const missing = await readRunDirectory(incomplete).catch((error: unknown) => error);
    expect(isServelabError(missing) && missing.code).toBe('INVALID_RUN_DIRECTORY');
    expect((missing as Error).message).toContain('missing requests.jsonl, config.json');

    const future = join(root, 'future');
    await writeRunFiles(runOf([fullyTracedRecord(0)]), summarize(runOf([fullyTracedRecord(0)])), future, DATA_REPORTER_NAMES);
    const summaryPath = join(future, 'summary.json');
    await writeFile(summaryPath, (await readFile(summaryPath, 'utf8')).replace('"formatVersion": 2', '"formatVersion": 99'));
    const wrongVersion = await readRunDirectory(future).catch((error: unknown) => error);
    expect(isServelabError(wrongVersion) && wrongVersion.code).toBe('INVALID_RUN_DIRECTORY');
    expect((wrongVersion as Error).message).toContain('format version 99');

    const notADirectory = await readRunDirectory(join(root, 'nope')).catch((error: unknown) => error);
    expect(isServelabError(notADirectory) && notADirectory.code).toBe('INVALID_RUN_DIRECTORY');
  });

  it('compares runs side by side: table, compare.csv, node table, overlaid CDFs', async () => {
    const outputDirectory = join(root, 'comparison');
    const output = await runCli(registerCompareCommand, ['compare', routingDirectory, nodeDirectory, '--output-dir', outputDirectory]);
    // Labelled by the settings that differ between the two runs, in the first users' names.
    // Then the second run's difference from the first, with its interval (compare-deltas.ts).
    expect(output.split('\n')[0]).toMatch(/^metric\s+request_rate=20, num_prompts=120\s+request_rate=10, num_prompts=30\s+Δ request_rate=10, num_prompts=30$/);
    expect(output).toMatch(/requests succeeded \(count\)\s+\d+\s+30/);
    const rows = parseCsv(await readFile(join(outputDirectory, 'compare.csv'), 'utf8'));
    const second = 'request_rate=10, num_prompts=30';
    expect(rows[0]).toEqual(['metric', 'unit', 'request_rate=20, num_prompts=120', second, `delta ${second}`, `delta_low ${second}`, `delta_high ${second}`, `beyond_noise ${second}`]);
    // Server-side rows are kept; the node test's empty routing rows are kept only because the routing run fills them.
    expect(rows.map((row) => row[0])).toContain('server_latency p99');
    expect(output).toMatch(/server_latency p99 \(ms\)/);
    const target = rows.find((row) => row[0] === 'target arrival rate');
    // A row without a difference leaves the delta columns empty.
    expect(target?.slice(2)).toEqual(['20', '10', '', '', '', '']);
    const ttftP50 = rows.find((row) => row[0] === 'ttft p50');
    expect(ttftP50?.[7]).toMatch(/^(true|false)$/);
    const nodes = parseCsv(await readFile(join(outputDirectory, 'compare-nodes.csv'), 'utf8'));
    expect(nodes.slice(1).map((row) => row[0])).toEqual(Array(3).fill('request_rate=20, num_prompts=120'));
    const html = await readFile(join(outputDirectory, 'compare.html'), 'utf8');
    expect(html.match(/<svg /g)?.length).toBe(4);
    expect((await readdir(join(outputDirectory, 'charts'))).filter((file) => file.endsWith('.png'))).toHaveLength(4);
  });
});

describe('comparison labels, rows and trend', () => {
  it('labels runs by the one setting that differs, drops rows empty or zero in every run, and draws the trend against it', async () => {
    const { comparisonRows, comparisonCharts, formatComparisonTable, settingLabels } = await import('../../src/report/compare/compare-runs.js');
    const runs = [64, 128, 256].map((maxRunningRequests, index) => {
      const run = runOf(Array.from({ length: 20 }, (_, request) => fullyTracedRecord(request * 0.1 + index * 0.01)), { runId: `node-${index}`, requestRate: 10 });
      run.config = { test: 'node', runId: `node-${index}`, outputDir: `/tmp/run-${index}`, requestRate: 10, maxRunningRequests };
      return run;
    });
    const labels = settingLabels(runs.map((run) => run.config));
    expect(labels).toEqual(['max_running_requests=64', 'max_running_requests=128', 'max_running_requests=256']);
    // No setting differs (only the run's name and place): no setting label, the run ids tell them apart.
    expect(settingLabels([runs[0]!.config, { ...runs[0]!.config, runId: 'other', outputDir: '/elsewhere' }])).toBeUndefined();
    const compared = runs.map((run, index) => ({ label: labels?.[index] as string, run, summary: summarize(run) }));
    const rows = comparisonRows(compared);
    const metrics = rows.map((row) => row.metric);
    expect(metrics).toContain('server_latency p99');
    expect(metrics).toContain('queue_time_in_server p99');
    // Node tests: no routing rows, and no row that is zero in every run (nothing failed).
    for (const dropped of ['nodes', 'node imbalance CV', 'requests failed', 'goodput']) expect(metrics).not.toContain(dropped);
    for (const row of rows) expect(row.values.some((value) => value !== null && value !== 0 && value !== '')).toBe(true);
    expect(formatComparisonTable(compared).split('\n')[0]).toMatch(/^metric\s+max_running_requests=64\s+max_running_requests=128\s+max_running_requests=256\s+Δ max_running_requests=128\s+Δ max_running_requests=256$/);
    const trend = comparisonCharts(compared).filter((chart) => chart.name.startsWith('compare-trend'));
    expect(trend.map((chart) => chart.name)).toEqual(['compare-trend-throughput', 'compare-trend-p99-latency']);
    const throughput = trend[0]?.chart;
    const line = throughput?.marks[0];
    expect(line?.kind === 'line' ? [...line.series.flatMap((series) => [...(series.xs as number[])])] : []).toEqual([64, 128, 256]);
    expect(throughput?.x.title).toBe('max_running_requests');
  });
});
