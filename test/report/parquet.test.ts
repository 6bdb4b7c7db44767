import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { parseCsv } from '../../src/report/csv/csv-format.js';
import { REQUESTS_CSV_COLUMNS } from '../../src/report/csv/csv-reporter.js';
import { REQUESTS_PARQUET, requestsParquetBytes } from '../../src/report/parquet/parquet-reporter.js';
import { DEFAULT_REPORTER_NAMES } from '../../src/report/registry.js';
import { writeRunFiles } from '../../src/report/write-run-files.js';
import type { RunData } from '../../src/types/run.js';
import { T0, fullyTracedRecord, recordAt, runOf } from '../analysis/records.js';
import { sampleRoutingRun } from './sample-run.js';

/** Expected parquet type (physical type, and UTF8 for strings) of each requests.csv column. */
const INTEGER_COLUMNS = new Set([
  'input_length',
  'expected_output_length',
  'actual_prompt_tokens',
  'actual_output_tokens',
  'cached_tokens',
  'decode_length',
  'prefix_group',
  'dataset_index',
  'http_status',
  'num_retractions',
  'retries',
  'server_status_code',
  'actual_total_tokens',
  'output_tokens_from_trace',
]);
const BOOLEAN_COLUMNS = new Set(['success', 'held_for_concurrency', 'has_generated_text']);
const STRING_COLUMNS = new Set(['request_id', 'req_id', 'host', 'session_id', 'error', 'finish_reason', 'error_message', 'data_quality', 'prefill_host', 'decode_host', 'bootstrap_room', 'host_node']);

function expectedType(column: string): string {
  if (INTEGER_COLUMNS.has(column)) return 'INT32';
  if (BOOLEAN_COLUMNS.has(column)) return 'BOOLEAN';
  if (STRING_COLUMNS.has(column)) return 'STRING';
  return 'DOUBLE';
}

/** What a requests.csv cell means, typed as the parquet column should hold it (null for an empty cell). */
function typedCell(cell: string, type: string): unknown {
  if (cell === '') return null;
  if (type === 'INT32' || type === 'DOUBLE') return Number(cell);
  if (type === 'BOOLEAN') return cell === 'true';
  return cell;
}

/** A run that exercises every column: warmups, held requests, sessions, awkward strings, failures, missing values. */
function mixedRun(): RunData {
  const run = sampleRoutingRun(60);
  run.records.unshift(fullyTracedRecord(0, { warmup: true, requestId: 'warmup-0' }));
  run.records.push(
    fullyTracedRecord(3.5, {
      sessionId: 'session, "quoted"\nline two',
      dispatchTime: T0 + 3.5004,
      heldForConcurrency: true,
      retries: 2,
      finishReason: 'length',
      numRetractions: 1,
      httpStatus: 200,
      serverDispatchTime: T0 + 3.5021,
      serverResponseSentTime: T0 + 3.61,
      serverFinishTime: T0 + 3.9,
      prefillWaitingLatency: 0.0004,
      prefillLaunchLatency: 0.0012,
      decodeThroughputTokensPerSecond: 41.5,
      outputTokensFromTrace: 9,
      prefillHost: 'http://127.0.0.1:30001',
      decodeHost: 'http://127.0.0.1:30002',
      // Above 2^53: a double would round it, the text keeps it.
      bootstrapRoom: '9223372036854775807',
      prefillQueueTime: 0.0021,
      prefillForwardTime: 0.0425,
      kvTransferTime: 0.00634,
      decodeQueueTime: 0.0009,
      kvTransferWaitTime: 0.0071,
      hostNode: 'gpu-node-07',
    }),
    recordAt({ scheduledTime: 4, dispatchTime: T0 + 4, heldForConcurrency: false, success: false, error: 'server_error', errorMessage: 'bad ünïcode ✓, comma', host: '', serverStatusCode: 503, dataQuality: 'serverCreatedTime:outside_run' }),
    recordAt({ scheduledTime: 4.123456789, arrivalTime: 4.1234571, firstTokenTime: 4.2, finishTime: 4.9, actualOutputTokens: 1 }),
  );
  return run;
}

/**
 * Whether this machine's Python has pyarrow and pandas (`pip install pyarrow pandas`), readers servelab did not write;
 * polars and duckdb are read too where installed.
 */
function pyarrowAvailable(): boolean {
  try {
    execFileSync('python3', ['-c', 'import pyarrow, pandas'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const PYARROW = pyarrowAvailable();
if (!PYARROW) console.log('requests.parquet: the pyarrow and pandas readers are skipped: python3 with pyarrow and pandas is not installed (pip install pyarrow pandas)');

/**
 * requests.parquet as pyarrow and pandas read it: the schema (name, arrow type), pyarrow's rows, and whether pandas'
 * read_parquet, polars and duckdb give the same table (null where one is not installed). json writes each float as the shortest text that reads back to the same double
 * (a NaN would make the output unreadable JSON, and the test fail).
 */
const PYARROW_READER = `
import json, math, sys
import pyarrow.parquet as pq
import pandas as pd
table = pq.read_table(sys.argv[1])
rows = table.to_pylist()
frame = pd.read_parquet(sys.argv[1], dtype_backend='numpy_nullable')
same = list(frame.columns) == table.column_names and len(frame) == len(rows) and all(
    (pd.isna(frame.iat[r, c]) and rows[r][name] is None) or (not pd.isna(frame.iat[r, c]) and frame.iat[r, c] == rows[r][name])
    for c, name in enumerate(table.column_names) for r in range(len(rows)))
expected = [tuple(row[name] for name in table.column_names) for row in rows]
try:
    import polars
    polars_frame = polars.read_parquet(sys.argv[1])
    polars_agrees = polars_frame.columns == table.column_names and polars_frame.rows() == expected
except ImportError:
    polars_agrees = None
try:
    import duckdb
    relation = duckdb.sql('select * from read_parquet(?)'.replace('?', "'" + sys.argv[1].replace("'", "''") + "'"))
    duckdb_agrees = relation.columns == table.column_names and relation.fetchall() == expected
except ImportError:
    duckdb_agrees = None
print(json.dumps({
    'schema': [[field.name, str(field.type)] for field in table.schema],
    'rows': [list(row) for row in expected],
    'pandasAgrees': bool(same),
    'polarsAgrees': polars_agrees,
    'duckdbAgrees': duckdb_agrees,
}))
`;

const ARROW_TYPES: Record<string, string> = { INT32: 'int32', DOUBLE: 'double', BOOLEAN: 'bool', STRING: 'string' };

function arrayBufferOf(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

describe('requests.parquet', () => {
  let directory: string;
  let csvRows: string[][];
  let parquetRows: Record<string, unknown>[];
  let schemaTypes: Map<string, string>;
  let run: RunData;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'servelab-parquet-'));
    run = mixedRun();
    await writeRunFiles(run, summarize(run), directory, ['csv', 'parquet']);
    csvRows = parseCsv(await readFile(join(directory, 'requests.csv'), 'utf8'));
    const file = arrayBufferOf(await readFile(join(directory, REQUESTS_PARQUET)));
    parquetRows = (await parquetReadObjects({ file })) as Record<string, unknown>[];
    const metadata = parquetMetadata(file);
    schemaTypes = new Map(
      metadata.schema.slice(1).map((element) => [element.name, element.converted_type === 'UTF8' ? 'STRING' : (element.type as string)]),
    );
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('has the columns of requests.csv, in order, with a type per kind of value', () => {
    expect(csvRows[0]).toEqual([...REQUESTS_CSV_COLUMNS]);
    expect([...schemaTypes.keys()]).toEqual([...REQUESTS_CSV_COLUMNS]);
    for (const column of REQUESTS_CSV_COLUMNS) expect(schemaTypes.get(column), column).toBe(expectedType(column));
  });

  it('holds the same rows as requests.csv (warmups left out), every cell equal, null where the CSV cell is empty', () => {
    const body = csvRows.slice(1);
    expect(parquetRows).toHaveLength(body.length);
    expect(body.length).toBeGreaterThan(60);
    for (const [rowIndex, row] of body.entries()) {
      const parquetRow = parquetRows[rowIndex] as Record<string, unknown>;
      for (const [columnIndex, column] of REQUESTS_CSV_COLUMNS.entries()) {
        const cell = row[columnIndex] as string;
        const value = parquetRow[column];
        expect(value, `row ${rowIndex} ${column}`).toEqual(typedCell(cell, expectedType(column)));
        if (value !== null) expect(Number.isNaN(value), `row ${rowIndex} ${column}`).toBe(false);
      }
    }
  });

  it.skipIf(!PYARROW)('reads the same in pyarrow, pandas, polars and duckdb: the schema of requests.csv and every cell', () => {
    const output = execFileSync('python3', ['-c', PYARROW_READER, join(directory, REQUESTS_PARQUET)], { encoding: 'utf8', maxBuffer: 1 << 26 });
    const read = JSON.parse(output) as { schema: [string, string][]; rows: unknown[][]; pandasAgrees: boolean; polarsAgrees: boolean | null; duckdbAgrees: boolean | null };
    expect(read.schema).toEqual(REQUESTS_CSV_COLUMNS.map((column) => [column, ARROW_TYPES[expectedType(column)]]));
    const body = csvRows.slice(1);
    expect(read.rows).toHaveLength(body.length);
    for (const [rowIndex, row] of body.entries()) {
      for (const [columnIndex, column] of REQUESTS_CSV_COLUMNS.entries()) {
        expect(read.rows[rowIndex]?.[columnIndex], `row ${rowIndex} ${column}`).toEqual(typedCell(row[columnIndex] as string, expectedType(column)));
      }
    }
    expect(read.pandasAgrees).toBe(true);
    for (const [reader, agrees] of [['polars', read.polarsAgrees], ['duckdb', read.duckdbAgrees]] as const) {
      if (agrees === null) console.log(`requests.parquet: ${reader} is not installed (pip install ${reader}): not read with it`);
      else expect(agrees, reader).toBe(true);
    }
  });

  it('covers nulls and non-null values in every column of the sample, so the comparison means something', () => {
    for (const column of REQUESTS_CSV_COLUMNS) {
      const values = parquetRows.map((row) => row[column]);
      expect(values.some((value) => value !== null), column).toBe(true);
    }
    const held = parquetRows.map((row) => row.held_for_concurrency);
    expect(held).toContain(true);
    expect(held).toContain(false);
    expect(held).toContain(null);
    expect(parquetRows.map((row) => row.session_id)).toContain('session, "quoted"\nline two');
    expect(parquetRows.map((row) => row.error_message)).toContain('bad ünïcode ✓, comma');
    expect(parquetRows.some((row) => row.request_id === 'warmup-0')).toBe(false);
  });

  it('writes times as seconds after t0 rounded to the microsecond, like requests.csv', () => {
    const row = parquetRows.find((candidate) => candidate.actual_output_tokens === 1 && candidate.finish_time === 4.9);
    expect(row?.scheduled_time).toBe(4.123457);
    expect(row?.arrival_time).toBe(4.123457);
    expect(row?.send_lag).toBe(0);
    expect(row?.decode_length).toBe(1);
  });

  it('writes an empty run as a readable file with the same schema and no rows', async () => {
    const file = arrayBufferOf(requestsParquetBytes([], T0));
    expect(await parquetReadObjects({ file })).toEqual([]);
    expect(parquetMetadata(file).schema.slice(1).map((element) => element.name)).toEqual([...REQUESTS_CSV_COLUMNS]);
  });

  it('splits rows into row groups with one schema, and reads back the same rows as a single group', async () => {
    const file = arrayBufferOf(requestsParquetBytes(run.records, T0, 7));
    const metadata = parquetMetadata(file);
    expect(metadata.row_groups.length).toBe(Math.ceil(parquetRows.length / 7));
    expect(metadata.row_groups.map((group) => Number(group.num_rows))).toEqual(
      Array.from({ length: metadata.row_groups.length }, (_, index) => Math.min(7, parquetRows.length - index * 7)),
    );
    expect(await parquetReadObjects({ file })).toEqual(parquetRows);
  });

  it('keeps a count column as float64 rather than truncating a value that is not a 32-bit integer, in any row group', async () => {
    const run = runOf([recordAt({ arrivalTime: 0.1, cachedTokens: 2 }), recordAt({ arrivalTime: 0.2, cachedTokens: 1.5 }), recordAt({ arrivalTime: 0.3, cachedTokens: 3e9 })]);
    const file = arrayBufferOf(requestsParquetBytes(run.records, T0, 1));
    const cached = parquetMetadata(file).schema.find((element) => element.name === 'cached_tokens');
    expect(cached?.type).toBe('DOUBLE');
    expect((await parquetReadObjects({ file, columns: ['cached_tokens'] })).map((row) => row.cached_tokens)).toEqual([2, 1.5, 3e9]);
    const input = parquetMetadata(file).schema.find((element) => element.name === 'input_length');
    expect(input?.type).toBe('INT32');
  });

  it('is written by default, right after requests.csv', () => {
    expect(DEFAULT_REPORTER_NAMES.indexOf('parquet')).toBe(DEFAULT_REPORTER_NAMES.indexOf('csv') + 1);
  });
});
