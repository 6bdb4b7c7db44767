import { CONTROL_TOKEN_HEADER } from '../../../src/routing/router/control-auth.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createBuiltinRoutingPolicy } from '../../../src/routing/policies/registry.js';
import { startRouter, type RouterHandle } from '../../../src/routing/router/index.js';
import { deadUrl, sseEvents, startScriptedUpstreams, type ScriptedUpstream } from '../scripted-upstream.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

const upstreams = (count: number, gapMs = 0): Promise<ScriptedUpstream[]> => startScriptedUpstreams(count, gapMs, closers);

/** The control token these routers are started with; control requests carry it (see control-auth.test.ts). */
const TOKEN = 'test-control-token';
const AUTH = { [CONTROL_TOKEN_HEADER]: TOKEN };

async function router(workerUrls: string[], policy = 'round_robin', maxRetries?: number): Promise<RouterHandle> {
  const handle = await startRouter({
    workerUrls,
    policy: createBuiltinRoutingPolicy(policy, { seed: 1 }),
    healthCheckIntervalMs: 60_000,
    controlToken: TOKEN,
    ...(maxRetries === undefined ? {} : { maxRetries }),
  });
  closers.push(() => handle.close());
  return handle;
}

async function generate(baseUrl: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return request(`${baseUrl}/generate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ text: 'hello', sampling_params: { max_new_tokens: 3 }, stream: true, ...body }),
  });
}

describe('builtin router', () => {
  it('streams the upstream answer through unchanged, event by event, and forwards x-request-id', async () => {
    const [upstream] = await upstreams(1, 30);
    const handle = await router([upstream!.url]);
    const answer = await generate(handle.url, {}, { 'x-request-id': 'req-42' });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('text/event-stream');
    expect(answer.headers['x-upstream']).toBe('u0');
    expect(answer.headers['x-servelab-retries']).toBe('0');
    // Each chunk with how many events the upstream had written when it reached the client.
    const arrivals: { text: string; writtenByThen: number }[] = [];
    for await (const chunk of answer.body) arrivals.push({ text: (chunk as Buffer).toString('utf8'), writtenByThen: upstream!.eventsWritten });
    expect(arrivals.map((arrival) => arrival.text).join('')).toBe(sseEvents('u0').join(''));
    // Unbuffered: the first event reaches the client while the upstream still has events to write (each waits 30 ms
    // after the one before on a timer, so no stall of this process lets it write them all before the first is read).
    expect(arrivals[0]?.writtenByThen).toBeLessThan(sseEvents('u0').length);
    expect(upstream!.seen[0]?.headers['x-request-id']).toBe('req-42');
    expect(JSON.parse(upstream!.seen[0]!.body)).toMatchObject({ text: 'hello', stream: true });
  });

  it('takes the request id from rid when the header is absent and the policy parses the body', async () => {
    const [upstream] = await upstreams(1);
    const handle = await router([upstream!.url], 'cache_aware');
    const answer = await generate(handle.url, { rid: 'from-body', stream: false });
    expect(await answer.body.json()).toMatchObject({ request_id: 'from-body' });
  });

  it('with cache_aware, keeps requests that share a long prefix on one worker', async () => {
    const all = await upstreams(3);
    const handle = await router(all.map((upstream) => upstream.url), 'cache_aware');
    const system = (group: number): string => `System prompt of group ${group}. ${'Answer politely and briefly. '.repeat(6)}`;
    for (let index = 0; index < 12; index++) {
      const group = index % 3;
      await (await generate(handle.url, { text: `${system(group)}Question ${index}?`, stream: false })).body.dump();
    }
    const workersPerGroup = [0, 1, 2].map((group) => all.filter((upstream) => upstream.seen.some((seen) => (JSON.parse(seen.body) as { text: string }).text.startsWith(system(group)))).length);
    // Each group stays on one worker. (One request at a time leaves every worker idle, so each cache miss goes to the
    // least-loaded worker, the first on a tie, as smg does: the groups need not spread.)
    expect(workersPerGroup).toEqual([1, 1, 1]);
    expect(all.reduce((sum, upstream) => sum + upstream.seen.length, 0)).toBe(12);
  });

  it('spreads requests by the policy and reports per-worker metrics', async () => {
    const all = await upstreams(2);
    const handle = await router(all.map((upstream) => upstream.url));
    for (let index = 0; index < 4; index++) await (await generate(handle.url, { stream: false })).body.dump();
    expect(all.map((upstream) => upstream.seen.length)).toEqual([2, 2]);
    const metrics = await (await request(`${handle.url}/metrics`)).body.text();
    expect(metrics).toContain(`servelab_router_requests_total{worker="${all[0]!.url}"} 2`);
    expect(metrics).toContain(`servelab_router_in_flight{worker="${all[1]!.url}"} 0`);
  });

  it('retries a worker that died between health checks on another, without waiting for a health check, and says so in x-servelab-retries', async () => {
    const [doomed, live] = await upstreams(2);
    const handle = await router([doomed!.url, live!.url]);
    expect(handle.workers().map((worker) => worker.healthy)).toEqual([true, true]);
    await doomed!.close(); // a crash: its port now refuses connections, and no health check has noticed yet
    // Round robin sends the first request to the dead worker. (Health checks come every 60 s: a retry that waited
    // for one would outlast the test's timeout.)
    const answer = await generate(handle.url, { stream: false });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['x-servelab-retries']).toBe('1');
    expect(await answer.body.json()).toMatchObject({ served_by: 'u1' });
    expect(handle.workers()[0]).toMatchObject({ errors: 1, retries: 1 });
    const metrics = await (await request(`${handle.url}/metrics`)).body.text();
    expect(metrics).toContain(`servelab_router_retries_total{worker="${doomed!.url}"} 1`);
  });

  it('gives up after maxRetries with a 502 JSON error that counts the retries', async () => {
    const all = await upstreams(3);
    const handle = await router(all.map((upstream) => upstream.url), 'round_robin', 1);
    for (const upstream of all) await upstream.close();
    const answer = await generate(handle.url, {});
    expect(answer.statusCode).toBe(502);
    expect(answer.headers['x-servelab-retries']).toBe('1');
    expect(await answer.body.json()).toMatchObject({ error: { type: 'call_upstream_connection_failed', retries: 1 } });
  });

  it('opens the circuit breaker after repeated connection failures, and logs it', async () => {
    const [doomed, live] = await upstreams(2);
    const logged: string[] = [];
    const handle = await startRouter({
      workerUrls: [doomed!.url, live!.url],
      policy: createBuiltinRoutingPolicy('round_robin'),
      healthCheckIntervalMs: 60_000,
      log: (line) => logged.push(line),
    });
    closers.push(() => handle.close());
    expect(logged.filter((line) => line.endsWith('is healthy (health check passed)'))).toHaveLength(2);
    await doomed!.close();
    for (let index = 0; index < 8; index++) await (await generate(handle.url, { stream: false })).body.dump();
    // Three failed attempts open the breaker; after that the dead worker is not tried again.
    expect(handle.workers()[0]).toMatchObject({ healthy: false, errors: 3 });
    expect(live!.seen).toHaveLength(8);
    expect(logged.at(-1)).toMatch(/^worker 0 .* takes no requests until a health check passes: 3 attempts/);
  });

  it('answers a 5xx JSON error at once when every worker is dead, trying none', async () => {
    const handle = await router([await deadUrl()]);
    const answer = await generate(handle.url, {});
    expect(answer.statusCode).toBe(503);
    expect(handle.workers()[0]).toMatchObject({ healthy: false, errors: 0, retries: 0 });
    expect(await answer.body.json()).toMatchObject({ error: { type: 'no_available_workers' } });
    const readiness = await request(`${handle.url}/readiness`);
    expect(readiness.statusCode).toBe(503);
    await readiness.body.dump();
  });

  it('adds and removes workers at run time', async () => {
    const [first, second] = await upstreams(2);
    const handle = await router([first!.url]);
    const added = await request(`${handle.url}/workers`, { method: 'POST', headers: AUTH, body: JSON.stringify({ url: second!.url }) });
    expect(added.statusCode).toBe(200);
    const addedWorker = (await added.body.json()) as { id: number; healthy: boolean };
    expect(addedWorker.healthy).toBe(true);
    const listed = (await (await request(`${handle.url}/workers`, { headers: AUTH })).body.json()) as { workers: { url: string }[] };
    expect(listed.workers.map((worker) => worker.url)).toEqual([first!.url, second!.url]);
    for (let index = 0; index < 4; index++) await (await generate(handle.url, { stream: false })).body.dump();
    expect(second!.seen.length).toBe(2);

    const removed = await request(`${handle.url}/workers/${addedWorker.id}`, { method: 'DELETE', headers: AUTH });
    expect(removed.statusCode).toBe(200);
    await removed.body.dump();
    for (let index = 0; index < 3; index++) await (await generate(handle.url, { stream: false })).body.dump();
    expect(second!.seen.length).toBe(2);
    expect(first!.seen.length).toBe(5);
    const missing = await request(`${handle.url}/workers/999`, { method: 'DELETE', headers: AUTH });
    expect(missing.statusCode).toBe(404);
    await missing.body.dump();
  });

  it('stops routing to a worker whose health checks fail, and takes it back when they pass', async () => {
    const [first, second] = await upstreams(2);
    const handle = await router([first!.url, second!.url]);
    first!.healthStatus = 503;
    await handle.checkHealthNow();
    await handle.checkHealthNow();
    expect(handle.workers()[0]?.healthy).toBe(false);
    for (let index = 0; index < 3; index++) await (await generate(handle.url, { stream: false })).body.dump();
    expect(first!.seen).toHaveLength(0);
    first!.healthStatus = 200;
    await handle.checkHealthNow();
    for (let index = 0; index < 4; index++) await (await generate(handle.url, { stream: false })).body.dump();
    expect(first!.seen.length).toBeGreaterThan(0);
  });

  it('takes a hung worker out when its health checks time out', async () => {
    const [hung, live] = await upstreams(2);
    const handle = await startRouter({
      workerUrls: [hung!.url, live!.url],
      policy: createBuiltinRoutingPolicy('round_robin'),
      healthCheckIntervalMs: 60_000,
      healthCheckTimeoutMs: 100,
    });
    closers.push(() => handle.close());
    hung!.healthStatus = 0;
    // The hung worker never answers: without the 100 ms health-check timeout these checks would not return, and the
    // test would fail on its own timeout.
    await handle.checkHealthNow();
    await handle.checkHealthNow();
    expect(handle.workers().map((worker) => worker.healthy)).toEqual([false, true]);
  });

  it('aborts the upstream request when the client goes away mid-stream', async () => {
    const [upstream] = await upstreams(1, 300);
    const handle = await router([upstream!.url]);
    const controller = new AbortController();
    const answer = await request(`${handle.url}/generate`, {
      method: 'POST',
      body: JSON.stringify({ text: 'x', stream: true }),
      signal: controller.signal,
    });
    const iterator = answer.body[Symbol.asyncIterator]();
    await iterator.next();
    expect(handle.workers()[0]?.inFlight).toBe(1);
    controller.abort();
    for (let attempt = 0; attempt < 50 && (upstream!.abandonedStreams === 0 || handle.workers()[0]?.inFlight !== 0); attempt++) await sleep(10);
    expect(upstream!.abandonedStreams).toBe(1);
    expect(handle.workers()[0]?.inFlight).toBe(0);
  });

  it('sends /flush_cache to every worker', async () => {
    const all = await upstreams(2);
    const handle = await router(all.map((upstream) => upstream.url));
    const answer = await request(`${handle.url}/flush_cache`, { method: 'POST', headers: AUTH });
    expect(answer.statusCode).toBe(200);
    await answer.body.dump();
    expect(all.map((upstream) => upstream.seen.map((seen) => seen.path))).toEqual([['/flush_cache'], ['/flush_cache']]);
  });
});
