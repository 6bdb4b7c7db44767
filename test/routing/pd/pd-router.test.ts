import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock/clock.js';
import { startSimServer, type RunningSimServer } from '../../../src/engine/http/start-sim-server.js';
import { joinTapRecords } from '../../../src/orchestration/join-tap-records.js';
import { createRoundRobinPolicy } from '../../../src/routing/policies/round-robin/round-robin-policy.js';
import { startRouter, type RouterHandle } from '../../../src/routing/router/start-router.js';
import { fetchAllTapRecords } from '../../../src/routing/tap/tap-records-client.js';
import type { RequestRecord } from '../../../src/types/record.js';

/** The router's control token: /_servelab/tap-records needs it (control-auth.ts). */
const TOKEN = 'e'.repeat(64);

const servers: RunningSimServer[] = [];
let router: RouterHandle;
let prefillUrls: string[];
let decodeUrls: string[];

beforeAll(async () => {
  // 2P2D on loopback: two prefill and two decode servers, each refusing a request without a bootstrap room.
  for (const role of ['prefill', 'prefill', 'decode', 'decode'] as const) servers.push(await startSimServer({ profile: { kind: 'simple', stepMs: 1 }, role }));
  prefillUrls = servers.slice(0, 2).map((server) => server.url);
  decodeUrls = servers.slice(2).map((server) => server.url);
  router = await startRouter({
    workerUrls: [],
    policy: createRoundRobinPolicy({}),
    pd: {
      // A simulated prefill server serves its bootstrap endpoint on its HTTP port (src/engine/http/pd-http.ts).
      prefill: servers.slice(0, 2).map((server) => ({ url: server.url, bootstrapPort: server.port })),
      decode: decodeUrls,
      prefillPolicy: createRoundRobinPolicy({}),
      decodePolicy: createRoundRobinPolicy({}),
    },
    traceClock: systemClock,
    healthCheckIntervalMs: 60_000,
    controlToken: TOKEN,
  });
  await router.checkHealthNow();
});
afterAll(async () => {
  await router.close();
  await Promise.all(servers.map((server) => server.close()));
});

describe('the builtin router in PD mode', () => {
  it("routes every request to a pair, answers from decode, and each record names both servers and the room", async () => {
    const records: RequestRecord[] = [];
    for (let index = 0; index < 4; index++) {
      const requestId = `pd-${index}`;
      const answer = await fetch(`${router.url}/generate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': requestId },
        body: JSON.stringify({ rid: requestId, text: 'a b c d e f', stream: true, sampling_params: { max_new_tokens: 3 } }),
      });
      expect(answer.status).toBe(200);
      expect(await answer.text()).toContain('[DONE]');
      records.push({ requestId, datasetIndex: index, warmup: false, inputLength: 6, expectedOutputLength: 3, scheduledTime: 0, success: true });
    }
    const { records: traced } = await fetchAllTapRecords(router.url, TOKEN);
    expect(joinTapRecords(records, traced).matched).toBe(4);
    const pairs = new Set<string>();
    for (const record of records) {
      expect(prefillUrls).toContain(record.prefillHost);
      expect(decodeUrls).toContain(record.decodeHost);
      expect(record.host).toBe(record.decodeHost);
      expect(record.bootstrapRoom).toMatch(/^\d+$/);
      expect(BigInt(record.bootstrapRoom as string) < 1n << 63n).toBe(true);
      pairs.add(`${record.prefillHost} ${record.decodeHost}`);
    }
    expect(new Set(records.map((record) => record.bootstrapRoom)).size).toBe(4);
    // Round robin on each side: two prefill and two decode servers in step give two distinct pairs.
    expect(pairs.size).toBe(2);
  });

  it("sends a request without a body (GET /v1/models) to a prefill server, as smg does, instead of refusing it", async () => {
    const answer = await fetch(`${router.url}/v1/models`);
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { data: unknown[] }).data.length).toBeGreaterThan(0);
  });

  it('lists both sides among its workers', async () => {
    const listed = router.workers().map((worker) => worker.url);
    expect(listed.sort()).toEqual([...prefillUrls, ...decodeUrls].sort());
  });
});
