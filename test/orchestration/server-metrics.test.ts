import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, symlinkSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anchoredSystemClock } from '../../src/clock/clock.js';
import { NodeTest } from '../../src/index.js';
import { collectServerMetrics } from '../../src/orchestration/server-metrics.js';
import { SERVER_METRICS_PARTIAL } from '../../src/scrape/server-metrics-rows.js';
import type { RunNotice } from '../../src/types/run.js';

const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));

/**
 * A full disk, simulated where this machine's disk is not: the partial file is a link to /dev/full, where every write
 * fails with ENOSPC as on a full disk (opening it succeeds, as opening a file on a full disk does).
 */
async function directoryOnFullDisk(parent: string, name: string): Promise<string> {
  const directory = join(parent, name);
  await mkdir(directory, { recursive: true });
  await symlink('/dev/full', join(directory, SERVER_METRICS_PARTIAL));
  return directory;
}

describe('server metrics on a full disk', () => {
  let workDirectory: string;
  beforeAll(async () => {
    workDirectory = await mkdtemp(join(tmpdir(), 'servelab-metrics-full-'));
  });
  afterAll(async () => {
    await rm(workDirectory, { recursive: true, force: true });
  });

  it('is a notice as soon as an append fails, and the collection still finishes', async () => {
    let answers = 0;
    const endpoint = createServer((request, response) => {
      answers++;
      response.writeHead(200, { 'content-type': 'text/plain' }).end(`sglang:num_running_reqs ${answers}\n`);
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/metrics`;
      const runDirectory = await directoryOnFullDisk(workDirectory, 'collection');
      const notices: RunNotice[] = [];
      // The run's clock: the scraping runs on its worker thread, as in a run, and the notice comes from there.
      const collection = await collectServerMetrics([url], anchoredSystemClock(), { directory: runDirectory, onNotice: (notice) => notices.push(notice) });
      // Before the collection ends: a run of hours hears of it when it happens, not at its end.
      for (let waited = 0; notices.length === 0 && waited < 20_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(notices).toHaveLength(1);
      expect(notices[0]?.source).toBe('scraper');
      expect(notices[0]?.message).toMatch(/server metrics stopped being saved: the disk is full: could not append to .*server-metrics\.partial\.csv \(ENOSPC\)/);
      expect(notices[0]?.time).toBeGreaterThan(0);
      expect(await collection.finish(anchoredSystemClock().nowEpochSeconds())).toBe(0);
      expect(notices).toHaveLength(1);
      expect((await readFile(join(runDirectory, 'server-metrics.csv'), 'utf8')).trim()).toBe('time_s,timestamp,node,metric,labels,value,scrape_ms,error');
    } finally {
      await new Promise<void>((resolve) => endpoint.close(() => resolve()));
    }
  }, 30_000);

  it('leaves a node test complete, its requests measured and the notice in its summary', async () => {
    const outputDir = join(workDirectory, 'node-test');
    // A run takes only a new or empty directory: the link goes in once the run has made it, as its server starts (before
    // the scraping does).
    const result = await new NodeTest({ requestRate: 100, numPrompts: 20, randomInputLen: 16, randomOutputLen: 4, profile: fastProfile, outputDir, warmupRequests: 0 }).run({
      onProgress: (progress) => {
        if (progress.phase === 'starting' && !existsSync(join(outputDir, SERVER_METRICS_PARTIAL))) symlinkSync('/dev/full', join(outputDir, SERVER_METRICS_PARTIAL));
      },
    });
    expect(result.status).toBe('completed');
    expect(result.run.records).toHaveLength(20);
    expect(result.run.records.every((record) => record.success)).toBe(true);
    const notices = result.run.notices ?? [];
    expect(notices.filter((notice) => notice.source === 'scraper').map((notice) => notice.message)).toEqual([expect.stringMatching(/the disk is full/)]);
    const summary = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as Record<string, unknown>;
    expect(JSON.stringify(summary)).toMatch(/server metrics stopped being saved: the disk is full/);
    expect(existsSync(join(outputDir, 'requests.csv'))).toBe(true);
  }, 60_000);
});
