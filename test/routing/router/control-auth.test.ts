import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createBuiltinRoutingPolicy } from '../../../src/routing/policies/registry.js';
import { CONTROL_TOKEN_HEADER } from '../../../src/routing/router/control-auth.js';
import { startRouter, type RouterHandle } from '../../../src/routing/router/index.js';
import { httpStatus as status } from '../../helpers/http-status.js';

const TOKEN = 'a'.repeat(64);
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

async function router(controlToken: string | null = TOKEN): Promise<RouterHandle> {
  // No workers: the control API is what is tested, and adding one must be refused before it is tried.
  const handle = await startRouter({ workerUrls: [], policy: createBuiltinRoutingPolicy('round_robin'), healthCheckIntervalMs: 60_000, ...(controlToken === null ? {} : { controlToken }) });
  closers.push(() => handle.close());
  return handle;
}

const addBody = JSON.stringify({ url: 'http://127.0.0.1:9' });

describe("the builtin router's control endpoints (issue 11)", () => {
  it('refuse every change without the per-run token, or with a wrong one', async () => {
    const handle = await router();
    expect(await status(`${handle.url}/workers`, { method: 'POST', body: addBody })).toBe(401);
    expect(await status(`${handle.url}/add_worker?url=http://127.0.0.1:9`, { method: 'POST' })).toBe(401);
    expect(await status(`${handle.url}/workers/0`, { method: 'DELETE', headers: { [CONTROL_TOKEN_HEADER]: 'b'.repeat(64) } })).toBe(401);
    expect(await status(`${handle.url}/flush_cache`, { method: 'POST', headers: { authorization: 'Bearer wrong' } })).toBe(401);
    expect(await status(`${handle.url}/workers`)).toBe(401);
    expect(handle.workers()).toHaveLength(0);
  });

  it('accept POST/DELETE with the token, and refuse other methods', async () => {
    const handle = await router();
    expect(await status(`${handle.url}/flush_cache`, { method: 'POST', headers: { [CONTROL_TOKEN_HEADER]: TOKEN } })).toBe(200);
    expect(await status(`${handle.url}/flush_cache`, { method: 'GET', headers: { [CONTROL_TOKEN_HEADER]: TOKEN } })).toBe(405);
    expect(await status(`${handle.url}/workers/0`, { method: 'POST', headers: { [CONTROL_TOKEN_HEADER]: TOKEN } })).toBe(405);
    expect(await status(`${handle.url}/workers/7`, { method: 'DELETE', headers: { authorization: `Bearer ${TOKEN}` } })).toBe(404);
  });

  it('refuse browser Origins and foreign Host headers even with the token', async () => {
    const handle = await router();
    const headers = { [CONTROL_TOKEN_HEADER]: TOKEN };
    expect(await status(`${handle.url}/flush_cache`, { method: 'POST', headers: { ...headers, origin: 'http://evil.example' } })).toBe(403);
    // A DNS-rebinding page reaches 127.0.0.1 under its own name.
    expect(await status(`${handle.url}/flush_cache`, { method: 'POST', headers: { ...headers, host: `evil.example:${handle.port}` } })).toBe(403);
    expect(await status(`${handle.url}/flush_cache`, { method: 'POST', headers: { ...headers, host: `localhost:${handle.port + 1}` } })).toBe(403);
    expect(await status(`${handle.url}/flush_cache`, { method: 'POST', headers: { ...headers, host: `localhost:${handle.port}` } })).toBe(200);
  });

  it('are closed on a router started without a token; health, readiness and metrics stay open', async () => {
    const handle = await router(null);
    const answer = await request(`${handle.url}/flush_cache`, { method: 'POST', headers: { [CONTROL_TOKEN_HEADER]: TOKEN } });
    expect(answer.statusCode).toBe(403);
    expect(JSON.stringify(await answer.body.json())).toContain('SERVELAB_ROUTER_CONTROL_TOKEN');
    expect(await status(`${handle.url}/health`)).toBe(200);
    expect(await status(`${handle.url}/metrics`)).toBe(200);
  });
});
