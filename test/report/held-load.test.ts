import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { parseCsv } from '../../src/report/csv/csv-format.js';
import { buildReportHtml } from '../../src/report/html/html-reporter.js';
import { DATA_REPORTER_NAMES } from '../../src/report/registry.js';
import { readRunDirectory } from '../../src/report/run-directory.js';
import { formatTerminalSummary } from '../../src/report/terminal/format-terminal-summary.js';
import { writeRunFiles } from '../../src/report/write-run-files.js';
import type { RunData } from '../../src/types/run.js';
import { T0, fullyTracedRecord, runOf } from '../analysis/records.js';

/** Four requests; the last two waited for a slot under maxConcurrency, for 100 ms and 300 ms. */
function heldRun(): RunData {
  return runOf([
    fullyTracedRecord(0),
    fullyTracedRecord(0.1, { dispatchTime: T0 + 0.1, heldForConcurrency: false }),
    fullyTracedRecord(0.2, { dispatchTime: T0 + 0.3, heldForConcurrency: true }),
    fullyTracedRecord(0.3, { dispatchTime: T0 + 0.6, heldForConcurrency: true }),
  ]);
}

describe('requests held back by maxConcurrency', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'servelab-held-'));
    const run = heldRun();
    await writeRunFiles(run, summarize(run), directory, DATA_REPORTER_NAMES);
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('writes held_for_concurrency and dispatch_time (relative to t0, empty when absent) to requests.csv', async () => {
    const rows = parseCsv(await readFile(join(directory, 'requests.csv'), 'utf8'));
    const header = rows[0] as string[];
    const cell = (row: number, name: string) => rows[row]?.[header.indexOf(name)];
    expect(header).toContain('held_for_concurrency');
    expect(header).toContain('dispatch_time');
    expect([1, 2, 3, 4].map((row) => cell(row, 'held_for_concurrency'))).toEqual(['', 'false', 'true', 'true']);
    expect([1, 2, 3, 4].map((row) => cell(row, 'dispatch_time'))).toEqual(['', '0.1', '0.3', '0.6']);
  });

  it('writes them to requests.jsonl and reads them back', async () => {
    const lines = (await readFile(join(directory, 'requests.jsonl'), 'utf8')).trim().split('\n');
    const third = JSON.parse(lines[2] as string) as Record<string, unknown>;
    expect(third.held_for_concurrency).toBe(true);
    expect(third.dispatch_time).toBe(0.3);
    const loaded = await readRunDirectory(directory);
    expect(loaded.run.records[3]?.heldForConcurrency).toBe(true);
    expect(loaded.run.records[3]?.dispatchTime).toBeCloseTo(T0 + 0.6, 6);
    expect(loaded.run.records[0]?.dispatchTime).toBeUndefined();
  });

  it('says in the terminal and report.html how much load was held back, and stays silent when none was', () => {
    const run = heldRun();
    const summary = summarize(run);
    expect(formatTerminalSummary(run, summary)).toMatch(/Held for max concurrency:\s+2 req \(50\.0%\), hold mean \/ p99 200\.0 \/ 29\d\.\d ms/);
    expect(buildReportHtml(run, summary, [])).toMatch(/Held back by max concurrency<\/td><td>2 requests \(50\.0%\); hold \(dispatch − scheduled\) mean 200\.000 ms/);
    const plain = runOf([fullyTracedRecord(0)]);
    expect(formatTerminalSummary(plain, summarize(plain))).not.toContain('Held');
  });
});
