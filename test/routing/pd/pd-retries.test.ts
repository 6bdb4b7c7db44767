import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock/clock.js';
import { startSimServer, type RunningSimServer } from '../../../src/engine/http/start-sim-server.js';
import { joinTapRecords } from '../../../src/orchestration/join-tap-records.js';
import { createRoundRobinPolicy } from '../../../src/routing/policies/round-robin/round-robin-policy.js';
import { startRouter, type RouterHandle } from '../../../src/routing/router/start-router.js';
import { fetchAllTapRecords } from '../../../src/routing/tap/tap-records-client.js';
import type { RequestRecord } from '../../../src/types/record.js';

/** The router's control token: /_servelab/tap-records needs it (control-auth.ts). */
const TOKEN = 'f'.repeat(64);
const opened: { close(): Promise<void> }[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((item) => item.close().catch(() => undefined)));
});

async function sim(role: 'prefill' | 'decode'): Promise<RunningSimServer> {
  const server = await startSimServer({ profile: { kind: 'simple', stepMs: 1 }, role });
  opened.push(server);
  return server;
}

/** A builtin PD router over the servers, all healthy at its one health check (later ones are a minute away). */
async function pdRouter(prefill: RunningSimServer[], decode: RunningSimServer[], maxRetries: number): Promise<RouterHandle> {
  const router = await startRouter({
    workerUrls: [],
    policy: createRoundRobinPolicy({}),
    pd: {
      prefill: prefill.map((server) => ({ url: server.url, bootstrapPort: server.port })),
      decode: decode.map((server) => server.url),
      prefillPolicy: createRoundRobinPolicy({}),
      decodePolicy: createRoundRobinPolicy({}),
    },
    maxRetries,
    traceClock: systemClock,
    healthCheckIntervalMs: 60_000,
    controlToken: TOKEN,
  });
  opened.push(router);
  await router.checkHealthNow();
  return router;
}

async function send(router: RouterHandle, count: number): Promise<{ records: RequestRecord[]; answers: { status: number; retries: string | null; text: string }[] }> {
  const records: RequestRecord[] = [];
  const answers: { status: number; retries: string | null; text: string }[] = [];
  for (let index = 0; index < count; index++) {
    const requestId = `retry-${Math.random().toString(36).slice(2)}-${index}`;
    const answer = await fetch(`${router.url}/generate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify({ rid: requestId, text: 'a b c d', stream: true, sampling_params: { max_new_tokens: 3 } }),
    });
    answers.push({ status: answer.status, retries: answer.headers.get('x-servelab-retries'), text: await answer.text() });
    records.push({ requestId, datasetIndex: index, warmup: false, inputLength: 4, expectedOutputLength: 3, scheduledTime: 0, success: true });
  }
  const { records: traced } = await fetchAllTapRecords(router.url, TOKEN);
  joinTapRecords(records, traced);
  return { records, answers };
}

describe('the builtin PD router retries a failed pair, as smg does', () => {
  it('takes a request whose prefill server is gone to another pair: answered, its retries counted, both servers named', async () => {
    const [gone, live, decode] = [await sim('prefill'), await sim('prefill'), await sim('decode')];
    const router = await pdRouter([gone, live], [decode], 4);
    await gone.close();
    const { records, answers } = await send(router, 4);
    for (const answer of answers) {
      expect(answer.status, answer.text).toBe(200);
      expect(answer.text).toContain('[DONE]');
    }
    // Round robin on the prefill side sends the first request to the dead server first; it is retried on the live one.
    expect(records[0]?.retries).toBe(1);
    expect(answers[0]?.retries).toBe('1');
    for (const record of records) {
      expect(record.prefillHost).toBe(live.url);
      expect(record.host).toBe(decode.url);
    }
    expect(router.workers().find((worker) => worker.url === gone.url)?.retries).toBeGreaterThanOrEqual(1);
  });

  it('takes a request whose decode server is gone to another pair', async () => {
    const [prefill, gone, live] = [await sim('prefill'), await sim('decode'), await sim('decode')];
    const router = await pdRouter([prefill], [gone, live], 4);
    await gone.close();
    const { records, answers } = await send(router, 3);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(records[0]?.retries).toBe(1);
    for (const record of records) expect(record.decodeHost).toBe(live.url);
  });

  it('relays the failure with --max-retries 0: a 502 naming the failed leg, no retry', async () => {
    const [gone, decode] = [await sim('prefill'), await sim('decode')];
    const router = await pdRouter([gone], [decode], 0);
    await gone.close();
    const { records, answers } = await send(router, 1);
    expect(answers[0]?.status).toBe(502);
    expect(answers[0]?.text).toContain('prefill_server_error');
    expect(answers[0]?.retries).toBe('0');
    expect(records[0]?.retries).toBeUndefined();
  });
});
