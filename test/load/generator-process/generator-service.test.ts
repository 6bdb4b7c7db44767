import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.js';
import { startGeneratorService, type GeneratorService } from '../../../src/load/generator-process/generator-service.js';
import { GENERATOR_PATHS } from '../../../src/load/generator-process/generator-protocol.js';
import { CONTROL_TOKEN_HEADER } from '../../../src/routing/router/control-auth.js';
import { httpStatus } from '../../helpers/http-status.js';

const TOKEN = 'a'.repeat(64);

describe('the load-generator service', () => {
  let service: GeneratorService;
  let closed: GeneratorService;

  beforeAll(async () => {
    service = await startGeneratorService({ host: '127.0.0.1', controlToken: TOKEN });
    closed = await startGeneratorService({ host: '127.0.0.1', controlToken: undefined });
  });
  afterAll(async () => {
    await service.close();
    await closed.close();
  });

  it('answers only the run: no token, a wrong token, a browser page and a generator without a token are refused', async () => {
    const clock = `${service.url}${GENERATOR_PATHS.clock}`;
    const statusOf = (url: string, headers: Record<string, string>): Promise<number> => httpStatus(url, { headers });
    expect(await statusOf(clock, {})).toBe(401);
    expect(await statusOf(clock, { [CONTROL_TOKEN_HEADER]: 'b'.repeat(64) })).toBe(401);
    expect(await statusOf(clock, { [CONTROL_TOKEN_HEADER]: TOKEN, origin: 'http://example.invalid' })).toBe(403);
    expect(await statusOf(`${closed.url}${GENERATOR_PATHS.clock}`, { [CONTROL_TOKEN_HEADER]: TOKEN })).toBe(403);
    expect(await statusOf(clock, { [CONTROL_TOKEN_HEADER]: TOKEN })).toBe(200);
  });

  it('accepts the node name it is told in the Host header, and no other name', async () => {
    const named = await startGeneratorService({ host: '127.0.0.1', advertisedHost: 'node-a', controlToken: TOKEN });
    try {
      const port = new URL(named.url).port;
      const statusFor = (host: string): Promise<number> =>
        httpStatus(`${named.url}${GENERATOR_PATHS.clock}`, { headers: { [CONTROL_TOKEN_HEADER]: TOKEN, host: `${host}:${port}` } });
      expect(await statusFor('node-a')).toBe(200);
      expect(await statusFor('rebound.example')).toBe(403);
    } finally {
      await named.close();
    }
  });

  it('stamps a clock exchange on its clock (receipt no later than answer) and ends the stream of a generator aborted before its start', async () => {
    const headers = { [CONTROL_TOKEN_HEADER]: TOKEN };
    const answer = await request(`${service.url}${GENERATOR_PATHS.clock}`, { headers });
    const stamps = (await answer.body.json()) as { receivedEpochMs: number; sentEpochMs: number };
    expect(stamps.sentEpochMs).toBeGreaterThanOrEqual(stamps.receivedEpochMs);
    const aborted = await request(`${service.url}${GENERATOR_PATHS.abort}`, { method: 'POST', headers });
    await aborted.body.dump();
    expect(aborted.statusCode).toBe(204);
    const stream = await request(`${service.url}${GENERATOR_PATHS.records}`, { headers });
    const text = await stream.body.text();
    expect(text).toMatch(/^event: done\ndata: \{"records":0,.*"interrupted":true\}\n\n$/);
    // Started (by the abort) once: a start message now is refused.
    const start = await request(`${service.url}${GENERATOR_PATHS.start}`, { method: 'POST', headers, body: '{}' });
    await start.body.dump();
    expect(start.statusCode).toBe(409);
  });
});

describe('a load generator whose coordinator is gone', () => {
  function orphanWatch(clock: ManualClock) {
    let count = 0;
    let resolve!: () => void;
    const once = new Promise<void>((done) => (resolve = done));
    return {
      settings: { host: '127.0.0.1', controlToken: TOKEN, clock, orphanTimeoutMs: 60_000, orphanCheckIntervalMs: 5, onOrphaned: () => (count++, resolve()) },
      count: () => count,
      once,
    };
  }
  const headers = { [CONTROL_TOKEN_HEADER]: TOKEN };
  const checksPass = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50));

  it('gives up a minute after the last request, not a millisecond before', async () => {
    const clock = new ManualClock(0, Date.now());
    const watch = orphanWatch(clock);
    const service = await startGeneratorService(watch.settings);
    try {
      clock.advanceBy(30_000);
      const exchange = await request(`${service.url}${GENERATOR_PATHS.clock}`, { headers });
      await exchange.body.dump();
      clock.advanceBy(59_999);
      await checksPass();
      expect(watch.count()).toBe(0);
      clock.advanceBy(1);
      await watch.once;
      expect(watch.count()).toBe(1);
    } finally {
      await service.close();
    }
  });

  it('never while the coordinator holds its records stream open; once it is closed, it does', async () => {
    const clock = new ManualClock(0, Date.now());
    const watch = orphanWatch(clock);
    const service = await startGeneratorService(watch.settings);
    try {
      const controller = new AbortController();
      const stream = await request(`${service.url}${GENERATOR_PATHS.records}`, { headers, signal: controller.signal });
      clock.advanceBy(600_000);
      await checksPass();
      expect(watch.count()).toBe(0);
      controller.abort();
      await stream.body.dump().catch(() => undefined);
      // The stream's end reaches the generator at some point; from then on a minute without word ends it.
      while (watch.count() === 0) {
        clock.advanceBy(60_000);
        await checksPass();
      }
      expect(watch.count()).toBe(1);
    } finally {
      await service.close();
    }
  });
});
