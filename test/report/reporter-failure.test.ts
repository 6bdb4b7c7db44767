import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { RequestsJournal } from '../../src/report/jsonl/requests-journal.js';
import { readRunDirectory } from '../../src/report/run-directory.js';
import { writeRunFilesReportingFailures } from '../../src/report/write-run-files.js';
import { fullyTracedRecord, runOf, T0 } from '../analysis/records.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'servelab-reporter-failure-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('a reporter that fails', () => {
  it('becomes a notice in summary.json (written again after it) while every other file is written', async () => {
    const directory = join(root, 'one-reporter-fails');
    const failing = join(root, 'failing-reporter.mjs');
    await writeFile(failing, "export default { name: 'broken', async write() { throw new Error('out of ink'); } };\n");
    const run = runOf([fullyTracedRecord(0), fullyTracedRecord(1)]);
    const { written, failures } = await writeRunFilesReportingFailures(run, summarize(run), directory, ['config', 'jsonl', 'summary', failing, 'csv']);
    expect(failures.map((failure) => failure.reporter)).toEqual(['broken']);
    expect(written.map((path) => path.slice(directory.length + 1)).sort()).toEqual(['config.json', 'requests.csv', 'requests.jsonl', 'summary.json']);
    const summary = JSON.parse(await readFile(join(directory, 'summary.json'), 'utf8')) as { notices?: { source: string; message: string }[] };
    expect(summary.notices).toEqual([{ source: 'reporter:broken', message: 'the broken reporter failed: out of ink' }]);
    // Read back, the notice is still the run's.
    expect((await readRunDirectory(directory)).run.notices).toEqual(summary.notices);
  });
});

describe('a concurrent reporter', () => {
  it('starts before the others, keeps its place among the written paths, and its late failure still reaches summary.json', async () => {
    const directory = join(root, 'concurrent');
    const started: string[] = [];
    (globalThis as { servelabStarted?: string[] }).servelabStarted = started;
    const late = join(root, 'late-reporter.mjs');
    await writeFile(late, "export default { name: 'late', concurrent: true, async write() { globalThis.servelabStarted.push('late'); await new Promise((resolve) => setTimeout(resolve, 50)); throw new Error('ran out late'); } };\n");
    const marker = join(root, 'marker-reporter.mjs');
    await writeFile(marker, "export default { name: 'marker', async write() { globalThis.servelabStarted.push('marker'); return ['marker-path']; } };\n");
    const run = runOf([fullyTracedRecord(0), fullyTracedRecord(1)]);
    const { written, failures } = await writeRunFilesReportingFailures(run, summarize(run), directory, [marker, 'summary', late, 'csv', 'parquet']);
    expect(started).toEqual(['late', 'marker']);
    expect(failures.map((failure) => failure.reporter)).toEqual(['late']);
    expect(written.map((path) => (path.startsWith(directory) ? path.slice(directory.length + 1) : path))).toEqual(['marker-path', 'summary.json', 'requests.csv', 'requests.parquet']);
    const summary = JSON.parse(await readFile(join(directory, 'summary.json'), 'utf8')) as { notices?: { source: string; message: string }[] };
    expect(summary.notices).toEqual([{ source: 'reporter:late', message: 'the late reporter failed: ran out late' }]);
  });
});

describe('the run journal', () => {
  it('writes config.json at once, records relative to t0 as they finish, and a provisional summary with t0, events and notices', async () => {
    const directory = join(root, 'journal');
    const journal = new RequestsJournal();
    await journal.open({ outputDirectory: directory, runId: 'j', testLevel: 'node', target: 'sim', requestRate: 5, config: { requestRate: 5 } });
    expect(JSON.parse(await readFile(join(directory, 'config.json'), 'utf8'))).toEqual({ test: 'node', requestRate: 5 });
    // A record that finished before t0 was known waits for it; warmups never reach the file.
    journal.record(fullyTracedRecord(0, { requestId: 'j-0' }));
    journal.record({ ...fullyTracedRecord(0, { requestId: 'j-warmup-0' }), warmup: true });
    journal.start(T0);
    journal.record(fullyTracedRecord(1, { requestId: 'j-1' }));
    journal.event({ time: T0 + 0.5, kind: 'process_exit', node: 0, detail: 'server was killed by SIGKILL' });
    journal.notice({ source: 'process:server', message: 'server was killed by SIGKILL during the run', time: T0 + 0.5 });
    await journal.close();
    expect(journal.recordsWritten).toBe(2);
    const lines = (await readFile(join(directory, 'requests.jsonl'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { request_id: string; scheduled_time: number });
    expect(lines.map((line) => line.request_id)).toEqual(['j-0', 'j-1']);
    expect(lines[1]?.scheduled_time).toBe(1);
    const loaded = await readRunDirectory(directory);
    expect(loaded.run.info.startTime).toBe(T0);
    expect(loaded.run.info.status).toBe('interrupted');
    expect(loaded.run.recovered).toEqual({ records: 2, droppedLines: 0, t0Known: true, missingFiles: ['summary.json', 'requests.csv', 'requests.parquet', 'timeseries.csv', 'report.html'] });
    expect(loaded.run.events).toEqual([{ time: T0 + 0.5, kind: 'process_exit', node: 0, detail: 'server was killed by SIGKILL' }]);
    expect(loaded.run.notices).toEqual([{ source: 'process:server', message: 'server was killed by SIGKILL during the run', time: T0 + 0.5 }]);
  });

  it('refuses a requests.jsonl whose broken line is not the last one, naming the line', async () => {
    const directory = join(root, 'broken-middle');
    const journal = new RequestsJournal();
    await journal.open({ outputDirectory: directory, runId: 'b', testLevel: 'node', target: 'sim', requestRate: 5, config: {} });
    journal.start(T0);
    await journal.close();
    await writeFile(join(directory, 'requests.jsonl'), '{"request_id":"b-0","scheduled_time":0}\n{"request_id":\n{"request_id":"b-2","scheduled_time":1}\n');
    await expect(readRunDirectory(directory)).rejects.toThrow('requests.jsonl line 2 is not JSON');
  });
});
