import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGeneratorService, type GeneratorService } from '../../../src/load/generator-process/generator-service.js';
import { GENERATOR_PATHS } from '../../../src/load/generator-process/generator-protocol.js';
import { CONTROL_TOKEN_HEADER } from '../../../src/routing/router/control-auth.js';

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
    const statusOf = async (url: string, headers: Record<string, string>): Promise<number> => {
      const answer = await request(url, { headers });
      await answer.body.dump();
      return answer.statusCode;
    };
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
      const statusFor = async (host: string): Promise<number> => {
        const answer = await request(`${named.url}${GENERATOR_PATHS.clock}`, { headers: { [CONTROL_TOKEN_HEADER]: TOKEN, host: `${host}:${port}` } });
        await answer.body.dump();
        return answer.statusCode;
      };
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
