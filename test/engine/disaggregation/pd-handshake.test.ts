import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimServer } from '../../../src/engine/http/start-sim-server.js';
import type { RunningSimServer } from '../../../src/engine/http/start-sim-server.js';

// 1 GB/s and 1000 bytes per token: a 4-token prompt's KV is 4000 bytes, 0.004 ms on the link, plus 3 ms latency.
const PD = { kvTransferBandwidthBytesPerSecond: 1e9, kvTransferLatencyMs: 3, kvBytesPerToken: 1000 };
const PROFILE = { kind: 'simple', stepMs: 2 } as const;
let prefill: RunningSimServer;
let decode: RunningSimServer;

beforeAll(async () => {
  prefill = await startSimServer({ profile: PROFILE, role: 'prefill', pd: PD });
  decode = await startSimServer({ profile: PROFILE, role: 'decode', pd: PD });
});
afterAll(async () => {
  await Promise.all([prefill.close(), decode.close()]);
});

/** Each request gets 10 s (the test's 30 s would hide which one hung: a hang fails at its own line). */
const REQUEST_DEADLINE_MS = 10_000;

async function generate(url: string, body: Record<string, unknown>): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${url}/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(REQUEST_DEADLINE_MS) });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

describe('simulated prefill and decode servers meet through the bootstrap endpoint', () => {
  it("a decode server gets the prompt's KV from its prefill server instead of prefilling it, and reports the phases of both halves", async () => {
    const body = { rid: 'pair-1', text: 'one two three four', bootstrap_host: '127.0.0.1', bootstrap_port: prefill.port, bootstrap_room: 77, sampling_params: { max_new_tokens: 5 } };
    const [prefilled, decoded] = await Promise.all([generate(prefill.url, body), generate(decode.url, body)]);
    expect(prefilled.status).toBe(200);
    expect(decoded.status).toBe(200);
    const meta = decoded.json['meta_info'] as Record<string, unknown>;
    expect(meta['completion_tokens']).toBe(5);
    const phases = meta['servelab_pd_phases'] as Record<string, number>;
    // The model's own durations (not wall-clock readings): one 2 ms prefill step, and the idle link's exact
    // bytes / bandwidth + latency.
    expect(phases['prefill_forward_time']).toBeCloseTo(0.002, 9);
    expect(phases['kv_transfer_time']).toBeCloseTo((4 * 1000) / 1e9 + 0.003, 9);
    for (const key of ['prefill_queue_time', 'kv_transfer_wait_time', 'decode_queue_time']) expect(phases[key]).toBeGreaterThanOrEqual(0);
    // The prefill server's gauges give that transfer too, as SGLang's kv_transfer_latency_ms and kv_transfer_speed_gb_s.
    const metrics = await (await fetch(`${prefill.url}/metrics`)).text();
    const value = (name: string): number => Number(metrics.split('\n').find((line) => line.startsWith(`${name}{`))?.split(' ').pop());
    expect(value('sglang:kv_transfer_latency_ms')).toBeCloseTo(0.004 + 3, 9);
    expect(value('sglang:kv_transfer_speed_gb_s')).toBeCloseTo(4000 / (3.004 * 1e6), 12);
    // The decode server reserved the KV before the prefill started, so it waited at least the prefill and the transfer.
    expect(phases['kv_transfer_wait_time']).toBeGreaterThanOrEqual((phases['prefill_forward_time'] as number) + (phases['kv_transfer_time'] as number) - 1e-9);
  });

  it('answers a decode request whose prefill server cannot be reached with a 500 (a failed transfer), not a prefill of its own', async () => {
    const body = { rid: 'lonely', text: 'one two', bootstrap_host: '127.0.0.1', bootstrap_port: 1, bootstrap_room: 5, sampling_params: { max_new_tokens: 3 } };
    const answer = await generate(decode.url, body);
    expect(answer.status).toBe(500);
    expect(JSON.stringify(answer.json)).toContain('Decode transfer failed');
  });

  it('refuses a decode request without a usable bootstrap port, saying the prefill server must be given with its port', async () => {
    const answer = await generate(decode.url, { rid: 'no-port', text: 'one two', bootstrap_host: '127.0.0.1', bootstrap_port: null, bootstrap_room: 6 });
    expect(answer.status).toBe(400);
    expect(JSON.stringify(answer.json)).toContain('--prefill URL,PORT');
  });
});

describe('a simulated decode server whose KV never comes', () => {
  it('fails the request with a 500 after its waiting timeout (injected: 200 ms), gives its KV back and serves the next', async () => {
    // SGLang's default wait is 300 s; this decode server is given 200 ms. Its prefill server registers the room, but
    // the prefill leg never arrives there: as if that server had died between the handshake and the transfer.
    const waiting = await startSimServer({ profile: PROFILE, role: 'decode', pd: { ...PD, kvWaitingTimeoutMs: 200 } });
    try {
      const body = { rid: 'orphan', text: 'one two', bootstrap_host: '127.0.0.1', bootstrap_port: prefill.port, bootstrap_room: 4242, sampling_params: { max_new_tokens: 2 } };
      const answer = await generate(waiting.url, body);
      expect(answer.status).toBe(500);
      const message = JSON.stringify(answer.json);
      expect(message).toContain('Decode transfer failed for request rid=orphan bootstrap_room=4242');
      expect(message).toContain('in KVPoll.WaitingForInput');
      const metrics = await (await fetch(`${waiting.url}/metrics`)).text();
      const transferQueue = metrics.split('\n').find((line) => line.startsWith('sglang:num_decode_transfer_queue_reqs{'));
      expect(Number(transferQueue?.split(' ').pop())).toBe(0);
      // A streamed request gets the same error as its abort event, and the server still serves a whole pair after.
      const streamed = await fetch(`${waiting.url}/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...body, rid: 'orphan-2', bootstrap_room: 4243, stream: true }), signal: AbortSignal.timeout(REQUEST_DEADLINE_MS) });
      expect(await streamed.text()).toMatch(/"finish_reason":\{"type":"abort","message":"Decode transfer failed[^"]*timed out after [\d.]+s in KVPoll\.WaitingForInput/);
      const pair = { rid: 'pair-after', text: 'one two three', bootstrap_host: '127.0.0.1', bootstrap_port: prefill.port, bootstrap_room: 4244, sampling_params: { max_new_tokens: 3 } };
      const [, decoded] = await Promise.all([generate(prefill.url, pair), generate(waiting.url, pair)]);
      expect(decoded.status).toBe(200);
    } finally {
      await waiting.close();
    }
  });
});

describe('a simulated prefill server whose decode server never registers the room', () => {
  it('fails the request with a 500 after its bootstrap timeout (injected: 200 ms) and empties its bootstrap queue', async () => {
    // SGLang's default is 300 s; this prefill server is given 200 ms. Only the prefill leg is sent: no decode server
    // ever preallocates for the room, as if it had died before it could.
    const waiting = await startSimServer({ profile: PROFILE, role: 'prefill', pd: { ...PD, bootstrapTimeoutMs: 200 } });
    try {
      const answer = await generate(waiting.url, { rid: 'unpaired', text: 'one two', bootstrap_host: '127.0.0.1', bootstrap_port: waiting.port, bootstrap_room: 5151, sampling_params: { max_new_tokens: 1 } });
      expect(answer.status).toBe(500);
      const message = JSON.stringify(answer.json);
      expect(message).toContain('Prefill bootstrap failed for request rid=unpaired bootstrap_room=5151');
      expect(message).toContain('in KVPoll.Bootstrapping');
      const metrics = await (await fetch(`${waiting.url}/metrics`)).text();
      const bootstrapQueue = metrics.split('\n').find((line) => line.startsWith('sglang:num_prefill_bootstrap_queue_reqs{'));
      expect(Number(bootstrapQueue?.split(' ').pop())).toBe(0);
    } finally {
      await waiting.close();
    }
  });
});

describe("a simulated PD server's queue gauges", () => {
  it("shows a decode request waiting for its KV in num_decode_transfer_queue_reqs, and its room registered on the prefill server, under SGLang's names", async () => {
    // Only the decode leg is sent: the decode server preallocates and registers the room, and the KV never comes.
    const controller = new AbortController();
    const body = { rid: 'waits', text: 'one two', bootstrap_host: '127.0.0.1', bootstrap_port: prefill.port, bootstrap_room: 991, sampling_params: { max_new_tokens: 2 }, stream: true };
    const pending = fetch(`${decode.url}/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: controller.signal }).catch(() => undefined);
    const gauge = async (url: string, name: string): Promise<number | undefined> => {
      const text = await (await fetch(`${url}/metrics`)).text();
      const line = text.split('\n').find((entry) => entry.startsWith(`${name}{`));
      return line === undefined ? undefined : Number(line.split(' ').pop());
    };
    await expect.poll(() => gauge(decode.url, 'sglang:num_decode_transfer_queue_reqs')).toBe(1);
    expect(await gauge(decode.url, 'sglang:num_decode_prealloc_queue_reqs')).toBe(0);
    expect(await gauge(prefill.url, 'sglang:num_prefill_bootstrap_queue_reqs')).toBe(0);
    expect(await gauge(prefill.url, 'sglang:num_prefill_inflight_queue_reqs')).toBe(0);
    controller.abort();
    await pending;
    // The client went: its reservation is given back and it leaves the transfer queue.
    await expect.poll(() => gauge(decode.url, 'sglang:num_decode_transfer_queue_reqs')).toBe(0);
  });
});
