import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RoutingTest } from '../../src/index.js';
import type { RequestRecord } from '../../src/types/record.js';
import { isAlive, launchedPids } from '../helpers/cli.js';
import { nginxMissing } from '../helpers/require-tool.js';

const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
let workDirectory: string;

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-routing-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

const small = { requestRate: 80, numPrompts: 80, randomInputLen: 32, randomOutputLen: 8, profile: fastProfile, warmupRequests: 1, progress: 'off' } as const;

/** arrival ≤ router send ≤ server created ≤ queue start ≤ queue end ≤ server first token; first token ≤ finish. */
function expectLifecycleOrder(record: RequestRecord): void {
  // Client, tap, router and server stamps come from processes of one host that share one epoch anchor (clock.ts,
  // CLOCK_ANCHOR_ENV), so physical order holds exactly; the slack is the float rounding of epoch seconds (0.24 µs)
  // with room. When each process measured its own anchor, a tap stamped 0.3-2 ms before the client sent, under load.
  const slackS = 0.00001;
  const chain = [record.arrivalTime, record.routerSendTime, record.serverCreatedTime, record.queueTimeStart, record.queueTimeEnd, record.serverFirstTokenTime];
  chain.forEach((value) => expect(value).toBeTypeOf('number'));
  for (let index = 1; index < chain.length; index++) expect(chain[index] as number).toBeGreaterThanOrEqual((chain[index - 1] as number) - slackS);
  expect(record.firstTokenTime as number).toBeLessThanOrEqual(record.finishTime as number);
}

describe('RoutingTest on loopback', () => {
  it('routes through the builtin router, which traces itself: every record has its host and an ordered lifecycle, and no taps run', async () => {
    const outputDir = join(workDirectory, 'builtin');
    const result = await new RoutingTest({ ...small, numGpus: 3, routingPolicy: 'round_robin', outputDir }).run();
    expect(result.status).toBe('completed');
    const records = result.run.records;
    expect(records).toHaveLength(80);
    for (const record of records) {
      expect(record.success).toBe(true);
      expectLifecycleOrder(record);
    }
    const hosts = new Map<string, number>();
    for (const record of records) hosts.set(record.host as string, (hosts.get(record.host as string) ?? 0) + 1);
    expect(hosts.size).toBe(3);
    // Round robin: even shares (80 over 3 is 27/27/26).
    for (const count of hosts.values()) expect(Math.abs(count - 80 / 3)).toBeLessThanOrEqual(1.5);
    expect(existsSync(join(outputDir, 'nodes.csv'))).toBe(true);
    expect(result.run.extras?.['routerTrace']).toEqual({ matchedRecords: 80 });
    expect(existsSync(join(outputDir, 'logs', 'taps.log'))).toBe(false);
    for (const pid of await launchedPids(outputDir)) expect(isAlive(pid)).toBe(false);
  });

  const noNginx = nginxMissing();
  it.skipIf(noNginx !== undefined)(`routes through real nginx (least_conn) with taps${noNginx === undefined ? '' : ` (skipped: ${noNginx})`}`, async () => {
    const outputDir = join(workDirectory, 'nginx');
    const result = await new RoutingTest({ ...small, numGpus: 2, router: 'nginx', routingPolicy: 'least_conn', outputDir }).run();
    expect(result.status).toBe('completed');
    expect(new Set(result.run.records.map((record) => record.host)).size).toBe(2);
    // nginx's logs sit in logs/ with every other process's (its config and temp files stay in nginx/).
    for (const file of ['nginx.log', 'nginx-error.log', 'nginx-access.log']) expect(existsSync(join(outputDir, 'logs', file)), file).toBe(true);
    expect(existsSync(join(outputDir, 'nginx', 'nginx.conf'))).toBe(true);
    for (const record of result.run.records) {
      expect(record.success).toBe(true);
      expectLifecycleOrder(record);
    }
  });

  it('carries out a failure schedule: the run completes, errors are recorded, events stamped, nothing left running', async () => {
    const outputDir = join(workDirectory, 'failures');
    const result = await new RoutingTest({
      ...small,
      // 6 s of load: node 1 is down from 1 s to 2 s, and its relaunch (about a second on a busy machine) ends well before.
      numPrompts: 480,
      requestRate: 80,
      randomOutputLen: 40,
      numGpus: 3,
      routingPolicy: 'round_robin',
      maxRetries: 0,
      failureSchedule: { '1': [1], '2': [] },
      outputDir,
    }).run();
    expect(result.status).toBe('completed');
    const kinds = result.run.events.map((event) => `${event.kind}:${event.node}`);
    expect(kinds).toEqual(['crash:1', 'restore:1']);
    // Each event at its instant of the schedule or after it (how much after is the machine's, not a test's), in order.
    const [crash, restore] = result.run.events;
    expect((crash?.time as number) - result.run.info.startTime).toBeGreaterThanOrEqual(1 - 1e-3);
    expect((restore?.time as number) - result.run.info.startTime).toBeGreaterThanOrEqual(2 - 1e-3);
    expect(crash?.time as number).toBeLessThan(restore?.time as number);
    const failed = result.run.records.filter((record) => !record.success);
    // Requests streaming from node 1 when it was killed, and (with no retries) those routed to it while it was down.
    expect(failed.length).toBeGreaterThan(0);
    for (const record of failed) expect(record.error).toBeTypeOf('string');
    // After the restore, node 1 serves again.
    const restoreTime = result.run.events[1]?.time as number;
    const node1 = (result.run.extras?.cluster as { serverUrls: string[] }).serverUrls;
    const servedLater = result.run.records.filter((record) => record.success && record.host === node1[1] && (record.arrivalTime as number) > restoreTime);
    expect(servedLater.length).toBeGreaterThan(0);
    const summary = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as { events?: unknown[] };
    expect(summary.events).toHaveLength(2);
    // The time to recover is reported for the restore (a number of seconds, or null if latency never settled).
    const restoreImpact = result.metrics.events?.find((impact) => impact.kind === 'restore');
    expect(restoreImpact).toHaveProperty('recoverySeconds');
    for (const pid of await launchedPids(outputDir)) expect(isAlive(pid)).toBe(false);
  });
});
