import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../../../src/clock/clock.js';
import { startSimServer } from '../../../src/engine/http/start-sim-server.js';
import { createBuiltinRoutingPolicy } from '../../../src/routing/policies/registry.js';
import { CONTROL_TOKEN_HEADER } from '../../../src/routing/router/control-auth.js';
import { controlPathKind, normalizeRequestPath } from '../../../src/routing/router/control-paths.js';
import { startRouter, type RouterHandle } from '../../../src/routing/router/index.js';
import { startTaps } from '../../../src/routing/tap/index.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../scripted-upstream.js';
import { httpStatus as status } from '../../helpers/http-status.js';

const TOKEN = 'e'.repeat(64);
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

async function upstream(): Promise<ScriptedUpstream> {
  const started = await startScriptedUpstream('worker');
  closers.push(() => started.close());
  return started;
}

async function router(workerUrls: string[]): Promise<RouterHandle> {
  const handle = await startRouter({
    workerUrls,
    policy: createBuiltinRoutingPolicy('round_robin'),
    healthCheckIntervalMs: 60_000,
    controlToken: TOKEN,
    traceClock: new ManualClock(),
  });
  closers.push(() => handle.close());
  return handle;
}

/** The spellings of `/flush_cache` a worker behind a proxy still runs (or that a lenient server would). */
const FLUSH_SPELLINGS = [
  '/flush%5Fcache',
  '/%66lush_cache',
  '/flush%5fcache',
  '//flush_cache',
  '/./flush_cache',
  '/v1/../flush_cache',
  '/FLUSH_CACHE',
  '/flush_cache/',
  '/flush%255Fcache',
  '/%2Fflush_cache',
  '/flush_cache?x=1',
];

/** What a cross-site form post from a browser page sends: an Origin and a simple content type (no preflight). */
const BROWSER = { origin: 'http://evil.example', 'content-type': 'text/plain' };

describe('control paths are matched after decoding and normalising the path (issue 29)', () => {
  it('normalises percent-encoding, double slashes, dot segments, a trailing slash and case', () => {
    for (const spelling of FLUSH_SPELLINGS) expect(normalizeRequestPath(spelling), spelling).toBe('/flush_cache');
    expect(normalizeRequestPath('/_servelab/tap%2Drecords?offset=3')).toBe('/_servelab/tap-records');
    expect(normalizeRequestPath('/bad%zzpath')).toBe('/bad%zzpath');
    expect(normalizeRequestPath('http://127.0.0.1:9/flush_cache')).toBe('/flush_cache');
    expect(controlPathKind('/update_weights_from_disk')).toBe('worker-admin');
    expect(controlPathKind('/update%5Fweight_version')).toBe('worker-admin');
    expect(controlPathKind('/%5Fservelab/harness')).toBe('servelab');
    expect(controlPathKind('/workers/0')).toBe('router-control');
    expect(controlPathKind('/v1/chat/completions')).toBe('open');
    expect(controlPathKind('/generate')).toBe('open');
  });

  it('the builtin router proxies no spelling of flush_cache, nor any worker admin endpoint, without the token', async () => {
    const worker = await upstream();
    const handle = await router([worker.url]);
    for (const spelling of FLUSH_SPELLINGS) {
      for (const method of ['POST', 'GET'] as const) {
        expect(await status(`${handle.url}${spelling}`, { method, headers: BROWSER, body: method === 'POST' ? '{}' : null }), `${method} ${spelling}`).toBeGreaterThanOrEqual(400);
        expect(await status(`${handle.url}${spelling}`, { method }), `${method} ${spelling} without Origin`).toBeGreaterThanOrEqual(400);
      }
    }
    const admin = ['/update_weights_from_disk', '/abort_request', '/start_profile', '/release_memory_occupation', '/configure_logging', '/add_worker', '/pause_generation'];
    for (const path of admin) {
      expect(await status(`${handle.url}${path}`, { method: 'POST', body: '{}' }), path).toBe(401);
      expect(await status(`${handle.url}${path.replace('_', '%5F')}`, { method: 'POST', headers: BROWSER, body: '{}' }), path).toBe(403);
    }
    expect(worker.seen).toEqual([]);
    // With the token (and no Origin) an admin request is passed on, without the token: it is the router's alone.
    expect(await status(`${handle.url}/abort_request`, { method: 'POST', headers: { [CONTROL_TOKEN_HEADER]: TOKEN }, body: '{}' })).toBe(200);
    expect(worker.seen.map((seen) => seen.path)).toEqual(['/abort_request']);
    expect(worker.seen[0]?.headers[CONTROL_TOKEN_HEADER]).toBeUndefined();
    // Inference stays open.
    expect(await status(`${handle.url}/generate`, { method: 'POST', body: JSON.stringify({ text: 'x', stream: false }) })).toBe(200);
  });

  it("the builtin router's /_servelab/ endpoints need the token, however spelled", async () => {
    const worker = await upstream();
    const handle = await router([worker.url]);
    expect(await status(`${handle.url}/_servelab/harness`, { method: 'DELETE' })).toBe(401);
    expect(await status(`${handle.url}/_servelab/harness`)).toBe(401);
    expect(await status(`${handle.url}/_servelab/tap-records`)).toBe(401);
    expect(await status(`${handle.url}/_servelab/tap-records`, { method: 'DELETE' })).toBe(401);
    expect(await status(`${handle.url}/%5Fservelab/tap-records`)).toBe(401);
    expect(await status(`${handle.url}/_servelab/harness`, { headers: { [CONTROL_TOKEN_HEADER]: TOKEN } })).toBe(200);
    expect(await status(`${handle.url}/_servelab/tap-records`, { headers: { [CONTROL_TOKEN_HEADER]: TOKEN } })).toBe(200);
    expect(worker.seen).toEqual([]);
  });

  it("the taps' records need the token; admin requests through a tap refuse a browser Origin", async () => {
    const worker = await upstream();
    const taps = await startTaps({ upstreamUrls: [worker.url], clock: systemClock, controlToken: TOKEN });
    closers.push(() => taps.close());
    const tap = taps.tapUrls[0] as string;
    await status(`${tap}/generate`, { method: 'POST', headers: { 'x-request-id': 'kept' }, body: JSON.stringify({ text: 'x', stream: false }) });
    expect(await status(`${tap}/_servelab/tap-records`)).toBe(401);
    expect(await status(`${tap}/_servelab/tap-records`, { method: 'DELETE' })).toBe(401);
    expect(await status(`${tap}/_servelab/tap%2Drecords`, { method: 'DELETE' })).toBe(401);
    expect(taps.records().map((record) => record.requestId)).toEqual(['kept']);
    expect(await status(`${tap}/_servelab/tap-records`, { headers: { [CONTROL_TOKEN_HEADER]: TOKEN } })).toBe(200);
    expect(await status(`${tap}/flush%5Fcache`, { method: 'POST', headers: BROWSER })).toBe(403);
    expect(worker.seen.map((seen) => seen.path)).toEqual(['/generate']);
    // A router in front of the taps flushing its workers' caches is passed through.
    expect(await status(`${tap}/flush_cache`, { method: 'POST' })).toBe(200);
  });

  it("the simulated server's control endpoints refuse browser Origins; its /_servelab/ endpoints need the token", async () => {
    const server = await startSimServer({ profile: JSON.stringify({ kind: 'simple', stepMs: 1 }), controlToken: TOKEN });
    closers.push(() => server.close());
    expect(await status(`${server.url}/flush_cache`, { headers: { origin: 'http://evil.example' } })).toBe(403);
    expect(await status(`${server.url}/flush_cache`, { method: 'POST', headers: BROWSER })).toBe(403);
    expect(await status(`${server.url}/%66lush_cache`, { headers: { origin: 'http://evil.example' } })).toBe(403);
    expect(await status(`${server.url}/flush_cache`)).toBe(200);
    expect(await status(`${server.url}/_servelab/harness`)).toBe(401);
    expect(await status(`${server.url}/_servelab/harness`, { method: 'DELETE' })).toBe(401);
    expect(await status(`${server.url}/_servelab/harness`, { headers: { [CONTROL_TOKEN_HEADER]: TOKEN, origin: 'http://evil.example' } })).toBe(403);
    expect(await status(`${server.url}/_servelab/harness`, { headers: { [CONTROL_TOKEN_HEADER]: TOKEN } })).toBe(200);
  });
});
