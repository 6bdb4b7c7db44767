import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { launchSimServer, simServerArgs } from '../../../src/cluster/launchers/sim/launch-sim-server.js';
import { resolveEngineSetup } from '../../../src/engine/create-engine.js';
import { startSimServer } from '../../../src/engine/http/start-sim-server.js';
import type { RunningSimServer } from '../../../src/engine/http/start-sim-server.js';

const PROFILE = { kind: 'simple', stepMs: 1 } as const;
const servers: Partial<Record<'colocated' | 'prefill' | 'decode', RunningSimServer>> = {};

beforeAll(async () => {
  for (const role of ['colocated', 'prefill', 'decode'] as const) servers[role] = await startSimServer({ profile: PROFILE, role });
});
afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.close()));
});

async function post(role: 'colocated' | 'prefill' | 'decode', path: string, body: Record<string, unknown>): Promise<{ status: number; text: string }> {
  const response = await fetch(`${(servers[role] as RunningSimServer).url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

describe('a simulated server in a disaggregation role', () => {
  it('refuses a request without bootstrap_room with 400 on a prefill and on a decode server, as SGLang does', async () => {
    for (const role of ['prefill', 'decode'] as const) {
      const generate = await post(role, '/generate', { rid: `no-room-${role}`, text: 'hello there', sampling_params: { max_new_tokens: 2 } });
      expect(generate.status, role).toBe(400);
      expect(generate.text).toContain("Disaggregated request received without bootstrap room id. req.rid='no-room-");
      const completion = await post(role, '/v1/completions', { model: 'm', prompt: 'hello there', max_tokens: 2, bootstrap_room: null });
      expect(completion.status, role).toBe(400);
      expect(completion.text).toContain('without bootstrap room id');
    }
  });

  it('serves a request that carries a room (both legs of a pair: the decode server gets its KV from the prefill server), and a co-located server serves one without', async () => {
    const room = { bootstrap_host: '127.0.0.1', bootstrap_port: (servers.prefill as RunningSimServer).port, bootstrap_room: 1234567890123 };
    const [prefilled, decoded] = await Promise.all(
      (['prefill', 'decode'] as const).map((role) => post(role, '/generate', { ...room, rid: `room-${role}`, text: 'hello there', sampling_params: { max_new_tokens: 2 } })),
    );
    expect(prefilled?.status).toBe(200);
    expect(decoded?.status).toBe(200);
    expect((await post('colocated', '/generate', { rid: 'plain', text: 'hello there', sampling_params: { max_new_tokens: 2 } })).status).toBe(200);
  });

  it('stops a prefill server after the first token (it never decodes), and lets a decode server generate them all', async () => {
    const room = { bootstrap_host: '127.0.0.1', bootstrap_port: (servers.prefill as RunningSimServer).port, bootstrap_room: 42 };
    const body = (rid: string) => ({ ...room, rid, text: 'one two three', sampling_params: { max_new_tokens: 6 } });
    const [prefilledText, decodedText] = await Promise.all([post('prefill', '/generate', body('prefill-only')), post('decode', '/generate', body('decode-all'))]);
    const prefilled = JSON.parse(prefilledText?.text ?? '') as { meta_info: { completion_tokens: number } };
    expect(prefilled.meta_info.completion_tokens).toBe(1);
    const decoded = JSON.parse(decodedText?.text ?? '') as { meta_info: { completion_tokens: number } };
    expect(decoded.meta_info.completion_tokens).toBe(6);
  });

  it('keeps no radix cache on a decode server (prefix reuse happens on prefill), whatever the cache setting', () => {
    expect(resolveEngineSetup({ profile: PROFILE, role: 'decode' }).config.disableRadixCache).toBe(true);
    expect(resolveEngineSetup({ profile: PROFILE, role: 'decode', disableRadixCache: false }).config.disableRadixCache).toBe(true);
    expect(resolveEngineSetup({ profile: PROFILE, role: 'prefill' }).config.disableRadixCache).toBe(false);
    expect(resolveEngineSetup({ profile: PROFILE }).config.disableRadixCache).toBe(false);
  });
});

describe('servelab sim-server --disaggregation-mode', () => {
  it('is passed for a prefill or decode role only, and a launched decode server refuses a request without a room', async () => {
    expect(simServerArgs({ name: 's', role: 'decode' }).join(' ')).toContain('--disaggregation-mode decode');
    expect(simServerArgs({ name: 's', role: 'colocated' })).not.toContain('--disaggregation-mode');
    expect(simServerArgs({ name: 's', role: 'prefill', kvTransferBandwidth: '200Gbit/s', kvTransferLatencyMs: 2 }).join(' ')).toContain('--kv-transfer-bandwidth 200Gbit/s --kv-transfer-latency-ms 2');
    expect(simServerArgs({ name: 's' })).not.toContain('--disaggregation-mode');
    // The built CLI (npm run build), as the routing test launches it.
    const launched = await launchSimServer({ name: 'pd-decode', role: 'decode', logPath: join(tmpdir(), `servelab-pd-decode-${process.pid}.log`) });
    try {
      const answer = await fetch(`${launched.url}/generate`, { method: 'POST', body: JSON.stringify({ rid: 'cli-no-room', text: 'hi', sampling_params: { max_new_tokens: 1 } }) });
      expect(answer.status).toBe(400);
      expect(await answer.text()).toContain('without bootstrap room id');
    } finally {
      await launched.stop();
    }
  });
});
