import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { summarize } from '../../src/analysis/summarize.js';
import { reporterRegistry } from '../../src/report/registry.js';
import type { RunData } from '../../src/types/run.js';
import { recordAt, runOf } from '../analysis/records.js';
import { sampleRoutingRun } from './sample-run.js';

async function listFiles(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => relative(directory, join(entry.parentPath, entry.name)));
}

const runs: [string, () => RunData][] = [
  ['a routing run with failures and events', () => sampleRoutingRun(40)],
  ['an empty run (interrupted before any request)', () => runOf([], { status: 'interrupted' })],
  ['a run where every request failed', () => runOf([recordAt({ arrivalTime: 0.1, success: false, error: 'connect_refused' }), recordAt({ arrivalTime: 0.2, success: false, error: 'connect_refused' })])],
  ['a run without server timing keys', () => runOf([recordAt({ arrivalTime: 0, routerSendTime: 0, firstTokenTime: 0.05, finishTime: 0.3, actualOutputTokens: 8, interTokenLatencies: [0.03, 0.03] })])],
];

// Every built-in reporter, on runs from full to empty: writes only inside the run directory, returns what it wrote,
// leaves no temporary file, never throws on missing data.
describe.each(Object.keys(reporterRegistry))('reporter %s', (name) => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), `servelab-conformance-${name}-`));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it.each(runs)('handles %s', async (label, makeRun) => {
    const run = makeRun();
    const directory = join(root, label.replace(/\W+/g, '-'));
    const reporter = reporterRegistry[name];
    const written = await reporter!.write({ run, summary: summarize(run), outputDirectory: directory });
    for (const path of written) {
      expect(existsSync(path), path).toBe(true);
      expect(relative(directory, path).startsWith('..'), path).toBe(false);
    }
    const files = existsSync(directory) ? await listFiles(directory) : [];
    expect(files.sort()).toEqual(written.map((path) => relative(directory, path)).sort());
    expect(files.some((file) => file.endsWith('.tmp'))).toBe(false);
  });
});
