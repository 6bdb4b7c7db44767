import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RoutingTest, type TestResult } from '../../src/index.js';
import { parseCsv } from '../../src/report/csv/csv-format.js';
import { REQUESTS_CSV_COLUMNS } from '../../src/report/csv/csv-reporter.js';

/**
 * The first users' framework as they use it (issue 14): their pandas analysis of requests.csv / requests.parquet, on a
 * real routing run (simulated servers, builtin router, taps).
 */

const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
let workDirectory: string;
let result: TestResult;

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-first-users-'));
  const test = new RoutingTest({
    numGpus: 2,
    routingPolicy: 'round_robin',
    requestRate: 100,
    numPrompts: 40,
    datasetName: 'random',
    randomInputLen: 32,
    randomOutputLen: 8,
    warmupRequests: 0,
    seed: 3,
    collectPerNodeMetrics: false,
    profile: fastProfile,
    progress: 'off',
    outputDir: join(workDirectory, 'run'),
  });
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
  const edges = Array.from({ length: bins + 1 }, (_, index) => low + ((high - low) * index) / bins);
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

describe('docs/metrics.md', () => {
  it('lists every requests.csv column once, as a table row with its origin', async () => {
    const docs = await readFile(fileURLToPath(new URL('../../docs/metrics.md', import.meta.url)), 'utf8');
    const section = docs.slice(docs.indexOf('## Per-request columns'), docs.indexOf('An absent value is an empty cell'));
    const rows = [...section.matchAll(/^\| (\d+) \| `([a-z0-9_]+)` \| ([^|]+) \|/gm)];
    expect(rows.map((match) => match[2])).toEqual([...REQUESTS_CSV_COLUMNS]);
    for (const match of rows) expect(match[3]?.trim(), match[2]).not.toBe('');
  });
});
