import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RoutingTest } from '../../src/index.js';
import { parseCsv } from '../../src/report/csv/csv-format.js';
import { isAlive, launchedPids } from '../helpers/cli.js';

const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
let workDirectory: string;

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-pd-failures-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

describe('a failure schedule in a PD routing test (sim, builtin router)', () => {
  it('crashes a prefill and then a decode server: failed records, events with roles, later requests on live pairs, recovery judged', async () => {
    const outputDir = join(workDirectory, 'crash-both-sides');
    // 2P2D, 7 s of load: prefill node 1 is down from 1 s to 2 s, decode node 3 from 2.5 s to 3.5 s (each relaunch
    // takes about a second on a busy machine). No retries: every request a dead server took fails, so the failures show.
    const result = await new RoutingTest({
      target: 'sim',
      pdDisaggregation: true,
      numPrefill: 2,
      numDecode: 2,
      routingPolicy: 'round_robin',
      maxRetries: 0,
      requestRate: 80,
      numPrompts: 560,
      randomInputLen: 32,
      randomOutputLen: 40,
      profile: fastProfile,
      warmupRequests: 1,
      progress: 'off',
      failureSchedule: [
        { atS: 1, action: 'crash', nodes: [1] },
        { atS: 2, action: 'restore', nodes: [1] },
        { atS: 2.5, action: 'crash', nodes: [3] },
        { atS: 3.5, action: 'restore', nodes: [3] },
      ],
      outputDir,
    }).run();
    expect(result.status).toBe('completed');
    expect(result.run.events.map((event) => `${event.kind}:${event.node}:${event.role}`)).toEqual(['crash:1:prefill', 'restore:1:prefill', 'crash:3:decode', 'restore:3:decode']);
    const urls = (result.run.extras?.cluster as { serverUrls: string[] }).serverUrls;
    const [crashPrefill, restorePrefill, crashDecode, restoreDecode] = result.run.events.map((event) => event.time) as [number, number, number, number];
    const failed = result.run.records.filter((record) => !record.success);
    expect(failed.length).toBeGreaterThan(0);
    // A failed request is data: an error class, and the pair the router gave it, one of whose servers was down.
    for (const record of failed) {
      expect(['http_5xx', 'stream_truncated', 'server_error']).toContain(record.error);
      const during = (from: number, to: number): boolean => (record.finishTime ?? 0) >= from && (record.arrivalTime ?? 0) <= to + 2.5;
      const caught = (record.prefillHost === urls[1] && during(crashPrefill, restorePrefill)) || (record.decodeHost === urls[3] && during(crashDecode, restoreDecode));
      expect(caught, `${record.requestId} ${record.error} ${record.prefillHost} ${record.decodeHost}`).toBe(true);
    }
    // Once restored, each server takes requests again and answers them.
    expect(result.run.records.some((record) => record.success && record.prefillHost === urls[1] && (record.arrivalTime as number) > restorePrefill), 'prefill node 1 serves after its restore').toBe(true);
    expect(result.run.records.some((record) => record.success && record.decodeHost === urls[3] && (record.arrivalTime as number) > restoreDecode), 'decode node 3 serves after its restore').toBe(true);
    // Analysed per node and role: the prefill server's failures are the requests it prefilled.
    const impacts = result.metrics.events ?? [];
    const prefillCrash = impacts.find((impact) => impact.kind === 'crash' && impact.node === 1);
    expect(prefillCrash).toMatchObject({ role: 'prefill', attribution: 'node', nodeUrl: urls[1] });
    expect(prefillCrash?.failuresUntilNextEvent, 'failures of the prefill node').toBeGreaterThan(0);
    expect(impacts.find((impact) => impact.kind === 'crash' && impact.node === 3)).toMatchObject({ role: 'decode', attribution: 'node' });
    for (const restore of impacts.filter((impact) => impact.kind === 'restore')) {
      expect(restore).toHaveProperty('recoverySeconds');
      expect(restore.recoveryNote).toBeUndefined();
    }
    const summary = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as { events?: { role?: string }[] };
    expect(summary.events?.map((event) => event.role)).toEqual(['prefill', 'prefill', 'decode', 'decode']);
    for (const pid of await launchedPids(outputDir)) expect(isAlive(pid)).toBe(false);
  }, 120_000);

  it('retries the requests a crashed decode server refused on the other pair: the retries column counts them', async () => {
    const outputDir = join(workDirectory, 'retries');
    // 1P2D, 4 s of load, decode node 2 down from 1 s to 2 s, the builtin router's default retries.
    const result = await new RoutingTest({
      target: 'sim',
      pdDisaggregation: true,
      numPrefill: 1,
      numDecode: 2,
      routingPolicy: 'round_robin',
      requestRate: 80,
      numPrompts: 320,
      randomInputLen: 32,
      randomOutputLen: 40,
      profile: fastProfile,
      warmupRequests: 1,
      progress: 'off',
      failureSchedule: { '1': [2], '2': [] },
      outputDir,
    }).run();
    expect(result.status).toBe('completed');
    const urls = (result.run.extras?.cluster as { serverUrls: string[] }).serverUrls;
    const retried = result.run.records.filter((record) => (record.retries ?? 0) > 0);
    expect(retried.length).toBeGreaterThan(0);
    // A retried request was answered by the pair the retry chose: the live decode server.
    for (const record of retried) {
      expect(record.success).toBe(true);
      expect(record.decodeHost).toBe(urls[1]);
    }
    // Only a stream already under way when its server died can fail: it cannot be sent again.
    for (const record of result.run.records.filter((candidate) => !candidate.success)) expect(record.error).toBe('stream_truncated');
    const [header, ...rows] = parseCsv(await readFile(join(outputDir, 'requests.csv'), 'utf8'));
    const column = (header as string[]).indexOf('retries');
    expect(rows.filter((row) => Number(row[column]) > 0)).toHaveLength(retried.length);
    for (const pid of await launchedPids(outputDir)) expect(isAlive(pid)).toBe(false);
  }, 120_000);
});
