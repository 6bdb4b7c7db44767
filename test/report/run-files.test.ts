import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { REQUESTS_CSV_COLUMNS } from '../../src/report/csv/csv-reporter.js';
import { parseCsv } from '../../src/report/csv/csv-format.js';
import { recordFromJsonObject } from '../../src/report/jsonl/jsonl-reporter.js';
import { parseJson } from '../../src/report/json-format.js';
import { DATA_REPORTER_NAMES, resolveReporter } from '../../src/report/registry.js';
import { writeRunFiles } from '../../src/report/write-run-files.js';
import { isServelabError } from '../../src/errors/servelab-error.js';
import type { RunData } from '../../src/types/run.js';
import { T0, fullyTracedRecord, recordAt, runOf } from '../analysis/records.js';
import { requireTool } from '../helpers/require-tool.js';

const noPython = requireTool('python3', 'python3', { command: 'python3', args: ['--version'] });

const DOCUMENTED_COLUMNS = [
  'request_id',
  'scheduled_time', 'arrival_time', 'router_send_time', 'server_created_time', 'queue_time_start', 'queue_time_end',
  'server_first_token_time', 'first_token_time', 'finish_time',
  'host',
  'total_latency', 'server_latency', 'ttft', 'server_ttft', 'queue_time_in_router', 'network_time', 'tokenize_time',
  'pure_queue_time', 'queue_time_in_server', 'prefill_time', 'decode_time', 'tpot', 'send_lag', 'intended_latency',
  'input_length', 'expected_output_length', 'actual_prompt_tokens', 'actual_output_tokens', 'cached_tokens', 'decode_length',
  'prefix_group', 'session_id', 'dataset_index',
  'success', 'error', 'http_status', 'num_retractions',
];

describe('run files', () => {
  let directory: string;
  let run: RunData;
  let written: string[];

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'servelab-report-'));
    run = runOf(
      [
        fullyTracedRecord(0, { sessionId: 'session, "one"', numRetractions: 0 }),
        recordAt({
          scheduledTime: 1,
          arrivalTime: 1.000002,
          success: false,
          error: 'http_5xx',
          httpStatus: 500,
          errorMessage: 'upstream said "no",\nthen hung up',
        }),
      ],
      { requestRate: Number.POSITIVE_INFINITY },
    );
    run.events.push({ time: T0 + 0.5, kind: 'crash', node: 1 });
    written = await writeRunFiles(run, summarize(run), directory, DATA_REPORTER_NAMES);
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('writes every default file atomically and leaves no temporary file behind', async () => {
    const expected = ['config.json', 'requests.csv', 'requests.jsonl', 'summary.json', 'timeseries.csv'];
    expect(written.map((path) => path.slice(directory.length + 1)).sort()).toEqual(expected);
    // No nodes.csv for a node test, and no temporary sibling left by the atomic writes.
    expect((await readdir(directory)).sort()).toEqual(expected);
  });

  it('writes requests.csv with the documented column names in order, relative microsecond times and empty cells', async () => {
    const rows = parseCsv(await readFile(join(directory, 'requests.csv'), 'utf8'));
    const header = rows[0] as string[];
    expect(header.slice(0, DOCUMENTED_COLUMNS.length)).toEqual(DOCUMENTED_COLUMNS);
    expect(header).toEqual(REQUESTS_CSV_COLUMNS);
    expect(rows).toHaveLength(3);
    /** Row `index` of the file (0 is the header), its cells by column name. */
    const row = (index: number) => Object.fromEntries(header.map((name, column) => [name, rows[index]?.[column]]));
    expect(row(1)).toMatchObject({
      arrival_time: '0.001',
      finish_time: '0.25',
      ttft: '0.049',
      tpot: '0.02',
      decode_length: '11',
      session_id: 'session, "one"',
      success: 'true',
      prefix_group: '',
    });
    expect(row(2)).toMatchObject({
      arrival_time: '1.000002',
      finish_time: '',
      total_latency: '',
      server_ttft: '',
      send_lag: '0.000002',
      error: 'http_5xx',
      error_message: 'upstream said "no",\nthen hung up',
    });
  });

  it.skipIf(noPython !== undefined)(`is read back by Python's csv module with the same cells${noPython === undefined ? '' : ` (skipped: ${noPython})`}`, async () => {
    const script = [
      'import csv, json, sys',
      'rows = list(csv.DictReader(open(sys.argv[1], newline="")))',
      'print(json.dumps([{k: r[k] for k in ("request_id", "session_id", "error_message", "ttft")} for r in rows]))',
    ].join('\n');
    const output = execFileSync('python3', ['-c', script, join(directory, 'requests.csv')], { encoding: 'utf8' });
    const rows = JSON.parse(output) as Record<string, string>[];
    expect(rows).toHaveLength(2);
    expect(rows[0]?.session_id).toBe('session, "one"');
    expect(rows[0]?.ttft).toBe('0.049');
    expect(rows[1]?.error_message).toBe('upstream said "no",\nthen hung up');
    expect(rows[1]?.ttft).toBe('');
  });

  it('writes requests.jsonl with relative times and ITL arrays that read back into the same records', async () => {
    const lines = (await readFile(join(directory, 'requests.jsonl'), 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(2);
    const first = JSON.parse(lines[0] as string) as Record<string, unknown>;
    expect(first.arrival_time).toBe(0.001);
    expect(first.inter_token_latencies).toHaveLength(10);
    const restored = recordFromJsonObject(first, T0);
    const original = run.records[0];
    expect(restored.requestId).toBe(original?.requestId);
    expect(restored.finishTime).toBeCloseTo(original?.finishTime as number, 6);
    expect(restored.interTokenLatencies).toEqual(original?.interTokenLatencies);
    expect(restored.queueTimeStart).toBeCloseTo(original?.queueTimeStart as number, 6);
  });

  it('writes summary.json with status, t0 as epoch, relative events, and infinity that survives the round trip', async () => {
    const text = await readFile(join(directory, 'summary.json'), 'utf8');
    expect(text).toContain('"targetRequestsPerSecond": "Infinity"');
    const file = parseJson(text) as {
      run: { status: string; t0EpochSeconds: number; targetRequestsPerSecond: number };
      events: { timeSinceT0Seconds: number }[];
      metrics: { counts: { failed: number } };
    };
    expect(file.run.status).toBe('completed');
    expect(file.run.t0EpochSeconds).toBe(T0);
    expect(file.run.targetRequestsPerSecond).toBe(Number.POSITIVE_INFINITY);
    expect(file.events[0]?.timeSinceT0Seconds).toBe(0.5);
    expect(file.metrics.counts.failed).toBe(1);
    const config = parseJson(await readFile(join(directory, 'config.json'), 'utf8')) as { requestRate: number };
    expect(config.requestRate).toBe(Number.POSITIVE_INFINITY);
  });

  it('writes timeseries.csv with per-stage concurrency per bin, times relative to t0', async () => {
    const rows = parseCsv(await readFile(join(directory, 'timeseries.csv'), 'utf8'));
    const header = rows[0] as string[];
    expect(header.slice(0, 3)).toEqual(['time', 'in_system_mean', 'in_system_peak']);
    expect(header).toContain('waiting_in_server_queue_mean');
    expect(header.slice(-5)).toEqual(['arrivals', 'completions', 'failures', 'output_tokens', 'output_tokens_per_second']);
    expect(rows[1]?.[0]).toBe('0.001'); // the window starts at the first arrival
    const arrivals = rows.slice(1).reduce((sum, row) => sum + Number(row[header.indexOf('arrivals')]), 0);
    expect(arrivals).toBe(2);
  });

  it('writes nodes.csv for a routing test, one row per host', async () => {
    const routingDirectory = join(directory, 'routing');
    const routingRun = runOf(
      [fullyTracedRecord(0, { host: 'http://a:1' }), fullyTracedRecord(0.1, { host: 'http://b:2' }), fullyTracedRecord(0.2, { host: 'http://a:1' })],
      { testLevel: 'routing' },
    );
    await writeRunFiles(routingRun, summarize(routingRun), routingDirectory, ['nodes']);
    const rows = parseCsv(await readFile(join(routingDirectory, 'nodes.csv'), 'utf8'));
    const header = rows[0] as string[];
    const column = (row: number, name: string) => rows[row]?.[header.indexOf(name)];
    expect(rows).toHaveLength(3);
    expect(column(1, 'host')).toBe('http://a:1');
    expect(column(1, 'requests')).toBe('2');
    expect(column(1, 'share')).toBe('0.666667');
    expect(column(1, 'cache_hit_ratio')).toBe('0.4');
    expect(column(2, 'ttft_p50')).toBe('0.049');
  });

  it('loads an unknown reporter name as a module path, and fails clearly when it cannot', async () => {
    const modulePath = join(directory, 'custom-reporter.mjs');
    await writeFile(
      modulePath,
      `import { writeFile } from 'node:fs/promises';
export default { name: 'custom', async write(context) { const path = context.outputDirectory + '/custom.txt'; await writeFile(path, String(context.summary.counts.total)); return [path]; } };`,
    );
    const paths = await writeRunFiles(run, summarize(run), directory, [modulePath]);
    expect(await readFile(paths[0] as string, 'utf8')).toBe('2');

    const failure = await resolveReporter('./no/such/reporter.js').catch((error: unknown) => error);
    expect(isServelabError(failure) && failure.code).toBe('MODULE_LOAD_FAILED');
    expect((failure as Error).message).toContain('./no/such/reporter.js');
    await writeFile(join(directory, 'not-a-reporter.mjs'), 'export default 42;');
    const wrongShape = await resolveReporter(join(directory, 'not-a-reporter.mjs')).catch((error: unknown) => error);
    expect(isServelabError(wrongShape) && wrongShape.code).toBe('MODULE_LOAD_FAILED');
  });
});

describe('summary.json time bases', () => {
  it('gives the epoch instants of metrics a relative twin that matches the relative event times', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'servelab-time-bases-'));
    try {
      const run = runOf([fullyTracedRecord(0.5), fullyTracedRecord(1.5)]);
      run.events.push({ time: T0 + 1, kind: 'crash', node: 0 });
      await writeRunFiles(run, summarize(run), directory, ['summary']);
      const file = parseJson(await readFile(join(directory, 'summary.json'), 'utf8')) as {
        run: { t0EpochSeconds: number };
        events: { timeSinceT0Seconds: number }[];
        metrics: {
          firstArrivalEpochSeconds: number;
          firstArrivalSinceT0Seconds: number;
          lastFinishSinceT0Seconds: number;
          events: { timeEpochSeconds: number; timeSinceT0Seconds: number }[];
        };
      };
      expect(file.metrics.firstArrivalEpochSeconds).toBeCloseTo(T0 + 0.501, 6); // epoch
      expect(file.metrics.firstArrivalSinceT0Seconds).toBe(0.501);
      expect(file.metrics.lastFinishSinceT0Seconds).toBe(1.75);
      expect(file.metrics.events[0]?.timeEpochSeconds).toBe(T0 + 1); // epoch
      expect(file.metrics.events[0]?.timeSinceT0Seconds).toBe(file.events[0]?.timeSinceT0Seconds);
      expect(file.events[0]?.timeSinceT0Seconds).toBe(1);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
