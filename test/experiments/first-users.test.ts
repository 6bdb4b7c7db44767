import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTestFile } from '../../src/cli/commands/run.js';
import { analyzeResults, NodeTest, RoutingTest, visualizeResults, type TestResult } from '../../src/index.js';
import { parseCsv } from '../../src/report/csv/csv-format.js';
import { REQUESTS_CSV_COLUMNS } from '../../src/report/csv/csv-reporter.js';

/**
 * The first users' framework as they use it (issue 14): their pandas analysis of requests.csv / requests.parquet, on a
 * real routing run (simulated servers, builtin router, taps).
 */

const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
let workDirectory: string;
let result: TestResult;
let test: RoutingTest;

/** Their config, as they wrote it (snake_case names). */
const firstUsersConfig = {
  num_gpus: 2,
  routing_policy: 'round_robin',
  request_rate: 100,
  num_prompts: 40,
  dataset_name: 'random',
  random_input_len: 32,
  random_output_len: 8,
  warmup_requests: 0,
  seed: 3,
  collect_per_node_metrics: false,
  profile: fastProfile,
  progress: 'off',
};

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-first-users-'));
  test = new RoutingTest({ ...firstUsersConfig, output_dir: join(workDirectory, 'run') });
  result = await test.run();
}, 60_000);
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

/**
 * `df.groupby(pd.cut(df['arrival_time'], bins=10))['req_id'].count()`, as pandas computes it: 10 equal-width bins over
 * [min, max], right-closed, the first edge moved left by 0.1% of the range so the minimum falls in bin 0; a row without
 * an arrival time falls in no bin, and count() leaves out rows whose req_id is missing. Throws, as pandas raises
 * KeyError, when a column is missing.
 */
function pandasCutCount(table: readonly Record<string, unknown>[], bins = 10): number[] {
  for (const column of ['arrival_time', 'req_id']) {
    if (table.length > 0 && !(column in (table[0] as object))) throw new Error(`KeyError: '${column}'`);
  }
  const arrivals = table.map((row) => (row.arrival_time === null || row.arrival_time === '' ? null : Number(row.arrival_time)));
  const present = arrivals.filter((value): value is number => value !== null && Number.isFinite(value));
  const low = Math.min(...present);
  const high = Math.max(...present);
  // numpy's linspace, as pandas.cut uses it: index x step + start, and the last edge set to the maximum itself (computed,
  // it can round below it and leave the last arrival out of every bin: 39 of 40 counted in one CI run).
  const step = (high - low) / bins;
  const edges = Array.from({ length: bins + 1 }, (_, index) => index * step + low);
  edges[bins] = high;
  edges[0] = (edges[0] as number) - (high - low) * 0.001;
  const counts = new Array<number>(bins).fill(0);
  arrivals.forEach((arrival, row) => {
    const reqId = table[row]?.req_id;
    if (arrival === null || !Number.isFinite(arrival) || reqId === null || reqId === '') return;
    const bin = edges.findIndex((edge, index) => index < bins && arrival > edge && arrival <= (edges[index + 1] as number));
    if (bin >= 0) counts[bin] = (counts[bin] as number) + 1;
  });
  return counts;
}

const FIRST_USERS_COLUMNS = [
  'req_id', 'success', 'error', 'host', 'has_generated_text', 'input_length', 'expected_output_length', 'actual_prompt_tokens',
  'actual_output_tokens', 'actual_total_tokens', 'output_tokens_from_trace', 'decode_length', 'scheduled_time', 'arrival_time',
  'router_send_time', 'server_created_time', 'queue_time_start', 'queue_time_end', 'server_first_token_time', 'first_token_time',
  'finish_time', 'server_latency', 'total_latency', 'ttft', 'queue_time_in_router', 'queue_time_in_server', 'tokenize_time', 'pure_queue_time',
];

async function csvTable(): Promise<Record<string, string>[]> {
  const [header, ...rows] = parseCsv(await readFile(result.exportedFiles.csv as string, 'utf8'));
  return rows.map((row) => Object.fromEntries((header as string[]).map((name, index) => [name, row[index] as string])));
}

async function parquetTable(): Promise<Record<string, unknown>[]> {
  const bytes = await readFile(result.exportedFiles.parquet as string);
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  return (await parquetReadObjects({ file })) as Record<string, unknown>[];
}

describe("the first users' files", () => {
  it('requests.csv carries their columns with their meanings, each once, and their pandas snippet counts every request', async () => {
    const [header] = parseCsv(await readFile(result.exportedFiles.csv as string, 'utf8'));
    for (const column of FIRST_USERS_COLUMNS) expect(header, column).toContain(column);
    expect(new Set(header).size).toBe(header?.length);
    const table = await csvTable();
    expect(table).toHaveLength(40);
    for (const row of table) {
      expect(row.req_id).toBe(row.request_id);
      expect(row.success).toBe('true');
      expect(row.has_generated_text).toBe('true');
      expect(Number(row.actual_total_tokens)).toBe(Number(row.actual_prompt_tokens) + Number(row.actual_output_tokens));
      expect(row.decode_length).toBe(row.actual_output_tokens);
      // The taps count no tokens and the simulated servers write no request log: no tracing source, an empty cell.
      expect(row.output_tokens_from_trace).toBe('');
      expect(row.host).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
      for (const column of ['server_latency', 'total_latency', 'ttft', 'queue_time_in_router', 'queue_time_in_server', 'pure_queue_time']) {
        expect(Number.isFinite(Number(row[column])) && row[column] !== '', column).toBe(true);
      }
    }
    const counts = pandasCutCount(table);
    expect(counts).toHaveLength(10);
    expect(counts.reduce((sum, count) => sum + count, 0)).toBe(40);
    // The first and last bins hold the first and last arrivals (the left edge is open, moved by 0.1% of the range).
    expect(counts[0]).toBeGreaterThan(0);
    expect(counts[9]).toBeGreaterThan(0);
    // Without their column the snippet fails as it did before (so the check above means something).
    expect(() => pandasCutCount(table.map(({ req_id: _dropped, ...rest }) => rest))).toThrow("KeyError: 'req_id'");
  });

  it('requests.parquet gives the same snippet the same counts, with typed columns', async () => {
    const table = await parquetTable();
    expect(Object.keys(table[0] as object)).toEqual([...REQUESTS_CSV_COLUMNS]);
    expect(pandasCutCount(table)).toEqual(pandasCutCount(await csvTable()));
    for (const row of table) {
      expect(row.has_generated_text).toBe(true);
      expect(row.actual_total_tokens).toBe((row.actual_prompt_tokens as number) + (row.actual_output_tokens as number));
      expect(row.output_tokens_from_trace).toBeNull();
      expect(row.req_id).toBe(row.request_id);
    }
  });
});

describe("the first users' names in the library", () => {
  it("loads their snake_case config into servelab's camelCase one", () => {
    expect(test.config.numGpus).toBe(2);
    expect(test.config.routingPolicy).toBe('round_robin');
    expect(test.config.requestRate).toBe(100);
    expect(test.config.randomOutputLen).toBe(8);
    expect(test.config.collectPerNodeMetrics).toBe(false);
    const node = new NodeTest({ max_running_requests: 64, chunked_prefill_size: 512, schedule_policy: 'lpm', max_concurrency: 8, random_range_ratio: 0.5, slo: { ttft_ms: 200 } });
    expect(node.config.maxRunningRequests).toBe(64);
    expect(node.config.chunkedPrefillSize).toBe(512);
    expect(node.config.schedulePolicy).toBe('lpm');
    expect(node.config.maxConcurrency).toBe(8);
    expect(node.config.randomRangeRatio).toBe(0.5);
    expect(node.config.slo).toEqual({ ttftMs: 200 });
    const routing = new RoutingTest({ num_gpus: 3, base_port: 31000, routing_policy: 'least_load', failure_schedule: [{ at_s: 1, action: 'crash', nodes: [1] }] });
    expect(routing.config.basePort).toBe(31000);
    expect(routing.config.failureSchedule).toEqual([{ atS: 1, action: 'crash', nodes: [1] }]);
  });

  it('refuses a setting given in both spellings with different values, and names an unknown snake_case key as written', () => {
    expect(() => new NodeTest({ num_prompts: 10, numPrompts: 20 })).toThrow(/num_prompts and numPrompts are the same setting with different values \(10 and 20\)/);
    expect(new NodeTest({ num_prompts: 10, numPrompts: 10 }).config.numPrompts).toBe(10);
    expect(() => new NodeTest({ num_promts: 10 })).toThrow(/unknown setting "num_promts"/);
  });

  it('loads a `servelab run` file in snake_case, resolving its paths relative to the file', async () => {
    const file = join(workDirectory, 'first-users.yaml');
    await writeFile(file, 'test: routing\nnum_gpus: 3\nrouting_policy: random\ndataset_name: custom\ndataset_path: data/prompts.jsonl\nrequest_rate: 5\n');
    const { test: level, settings } = await readTestFile(file);
    expect(level).toBe('routing');
    expect(settings).toMatchObject({ numGpus: 3, routingPolicy: 'random', requestRate: 5, datasetPath: join(workDirectory, 'data/prompts.jsonl') });
    expect(new RoutingTest(settings).config.numGpus).toBe(3);
  });

  it('answers success_rate, exported_files and the metrics under their names, latencies in milliseconds', () => {
    expect(result.success_rate).toBe(1);
    expect(result.exported_files).toBe(result.exportedFiles);
    for (const kind of ['csv', 'json', 'html'] as const) expect(result.exported_files[kind]).toMatch(/\/run\/(requests\.csv|summary\.json|report\.html)$/);
    const metrics = result.metrics;
    expect(metrics.request_throughput).toBe(metrics.throughput.requestsPerSecond);
    expect(metrics.input_throughput).toBe(metrics.throughput.inputTokensPerSecond);
    expect(metrics.output_throughput).toBe(metrics.throughput.outputTokensPerSecond);
    expect(metrics.request_throughput).toBeGreaterThan(0);
    for (const name of ['server_latency', 'total_latency', 'ttft', 'queue_time_in_router', 'queue_time_in_server', 'pure_queue_time'] as const) {
      const seconds = metrics.latencies[name];
      expect(seconds, name).not.toBeNull();
      expect(metrics[`avg_${name}`], name).toBeCloseTo((seconds?.mean as number) * 1000, 9);
      expect(metrics[`p50_${name}`], name).toBeCloseTo((seconds?.p50 as number) * 1000, 9);
      expect(metrics[`p95_${name}`], name).toBeCloseTo((seconds?.p95 as number) * 1000, 9);
      expect(metrics[`p99_${name}`], name).toBeCloseTo((seconds?.p99 as number) * 1000, 9);
    }
  });

  it("writes none of the first users' result names into summary.json (it is written from servelab's summary)", async () => {
    const text = await readFile(result.exported_files.json as string, 'utf8');
    expect(text).not.toMatch(/"(p99_ttft|avg_total_latency|request_throughput|success_rate)"/);
    expect(text).toContain('"requestsPerSecond"');
  });

  it('analyzes and visualizes from the result object or the run directory alike', async () => {
    const fromResult = await test.analyzeResults(result);
    const fromDirectory = await analyzeResults(result.outputDirectory);
    expect(fromResult.metrics.counts).toEqual(result.metrics.counts);
    expect(fromResult.metrics.p99_ttft).toBe(result.metrics.p99_ttft);
    expect(fromDirectory.metrics.counts).toEqual(result.metrics.counts);
    expect(fromDirectory.metrics.p99_ttft).toBeCloseTo(fromResult.metrics.p99_ttft as number, 2);
    const strict = await analyzeResults(result, { slo: { ttftMs: 0.001 } });
    expect(strict.metrics.goodput?.goodRequests).toBe(0);
    const written = await test.visualizeResults(result);
    expect(written.some((path) => path.endsWith('report.html'))).toBe(true);
    expect((await visualizeResults(result.outputDirectory)).length).toBe(written.length);
    await expect(analyzeResults({ notARun: true } as never)).rejects.toThrow(/give a run directory/);
  });
});

describe('docs/metrics.md', () => {
  it('lists every requests.csv column once, as a table row with its origin', async () => {
    const docs = await readFile(fileURLToPath(new URL('../../docs/metrics.md', import.meta.url)), 'utf8');
    const section = docs.slice(docs.indexOf('## Per-request columns'), docs.indexOf('An absent value is an empty cell'));
    const rows = [...section.matchAll(/^\| (\d+) \| `([a-z0-9_]+)` \| ([^|]+) \|/gm)];
    expect(rows.map((match) => match[2])).toEqual([...REQUESTS_CSV_COLUMNS]);
    for (const match of rows) expect(match[3]?.trim(), match[2]).not.toBe('');
  });
});
