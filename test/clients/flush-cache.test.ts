import { afterEach, describe, expect, test } from 'vitest';
import { flushCacheOnce } from '../../src/clients/common/flush-cache.js';
import { startScriptedServer } from './helpers/scripted-server.js';
import type { ScriptedServer } from './helpers/scripted-server.js';
import { closedPort } from './helpers/unreachable.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function statusServer(statusByMethod: Record<string, number>): Promise<ScriptedServer> {
  return startScriptedServer((request) => ({
    status: statusByMethod[request.method] ?? 404,
    headers: JSON_HEADERS,
    steps: [{ write: '{}' }, { end: true }],
  }));
}

describe('flushCacheOnce', () => {
  test('a POST answered 200 is the whole flush', async () => {
    server = await statusServer({ POST: 200 });
    expect(await flushCacheOnce(`${server.url}/`)).toEqual({ statusCode: 200 });
    expect(server.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['POST /flush_cache']);
  });

  test('a busy server (400) is answered at once, not asked again with GET', async () => {
    server = await statusServer({ POST: 400, GET: 200 });
    expect((await flushCacheOnce(server.url)).statusCode).toBe(400);
    expect(server.requests).toHaveLength(1);
  });

  test('a server that refuses POST is asked with GET', async () => {
    server = await statusServer({ POST: 405, GET: 200 });
    expect((await flushCacheOnce(server.url)).statusCode).toBe(200);
    expect(server.requests.map((request) => request.method)).toEqual(['POST', 'GET']);
  });

  test('a server that cannot be reached is status 0 with the error, never a throw', async () => {
    const answer = await flushCacheOnce(`http://127.0.0.1:${await closedPort()}`);
    expect(answer.statusCode).toBe(0);
    expect(answer.error).toBeTruthy();
  });
});
