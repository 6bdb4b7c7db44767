import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { buildReportHtml } from '../../src/report/html/html-reporter.js';
import { DATA_REPORTER_NAMES } from '../../src/report/registry.js';
import { readRunDirectory } from '../../src/report/run-directory.js';
import { formatTerminalSummary } from '../../src/report/terminal/format-terminal-summary.js';
import { writeRunFiles } from '../../src/report/write-run-files.js';
import { fullyTracedRecord, runOf } from '../analysis/records.js';

const records = () => Array.from({ length: 5 }, (_, index) => fullyTracedRecord(index * 0.5));

describe('target rate in the reports', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'servelab-target-rate-'));
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('prints n/a for a run without a target rate, with the scheduled and achieved rates', () => {
    const run = runOf(records(), { requestRate: Number.NaN });
    const summary = summarize(run);
    const text = formatTerminalSummary(run, summary);
    expect(text).toMatch(/Arrival rate target \/ scheduled \/ achieved:\s+n\/a \/ 2\.00 \/ 2\.00 req\/s\n/);
    expect(text).not.toContain('inf');
    const html = buildReportHtml(run, summary, []);
    expect(html).toContain('<td>n/a / 2.00 / 2.00 req/s</td>');
  });

  it('prints inf for an all-at-once run and the share of the target otherwise', () => {
    const infinite = runOf(records(), { requestRate: Number.POSITIVE_INFINITY });
    expect(formatTerminalSummary(infinite, summarize(infinite))).toMatch(/achieved:\s+inf \/ 2\.00 \/ 2\.00 req\/s\n/);
    const finite = runOf(records(), { requestRate: 2.5 });
    expect(formatTerminalSummary(finite, summarize(finite))).toMatch(/achieved:\s+2\.50 \/ 2\.00 \/ 2\.00 req\/s \(80\.00% of target\)/);
  });

  it('writes a missing target as null in summary.json and reads it back as no target', async () => {
    const run = runOf(records(), { requestRate: Number.NaN });
    await writeRunFiles(run, summarize(run), directory, DATA_REPORTER_NAMES);
    const text = await readFile(join(directory, 'summary.json'), 'utf8');
    // run.targetRequestsPerSecond and metrics.offeredLoad.targetRequestsPerSecond.
    expect(text.match(/"targetRequestsPerSecond": null/g)).toHaveLength(2);
    const loaded = await readRunDirectory(directory);
    expect(Number.isNaN(loaded.run.info.requestRate)).toBe(true);
    const again = summarize(loaded.run);
    expect(again.offeredLoad.targetRate).toBeNull();
    expect(formatTerminalSummary(loaded.run, again)).toMatch(/achieved:\s+n\/a \//);
  });
});
