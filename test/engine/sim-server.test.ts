import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { startSimServer } from '../../src/engine/http/start-sim-server.js';
import type { RunningSimServer } from '../../src/engine/http/start-sim-server.js';
import { parseSseBody } from '../conformance/sglang-server-api.js';
import { driveFakeTime, fakeTimeClock, useFakeTime, useRealTime } from '../helpers/fake-time.js';
import { holdSlots } from './helpers/hold-slots.js';

let server: RunningSimServer;

beforeAll(async () => {
  server = await startSimServer({ profile: { kind: 'simple', stepMs: 20 }, maxRunningRequests: 4, servedModelName: 'sim-test' });
  // Warm up (JIT, first connection) so the timing test does not start with a long event-loop stall.
  await (await post('/generate', { text: 'warm up', sampling_params: { max_new_tokens: 2 } })).text();
});

afterEach(useRealTime);

afterAll(async () => {
  await server.close();
});

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function waitFor(predicate: () => Promise<boolean>, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('condition not met in time');
}

async function waitingRequests(): Promise<number> {
  const ranks = (await (await fetch(`${server.url}/get_load`)).json()) as { num_waiting_reqs: number }[];
  return ranks.reduce((sum, rank) => sum + rank.num_waiting_reqs, 0);
}

async function runningRequests(): Promise<number> {
  const ranks = (await (await fetch(`${server.url}/get_load`)).json()) as { num_reqs: number; num_waiting_reqs: number }[];
  return ranks.reduce((sum, rank) => sum + rank.num_reqs + rank.num_waiting_reqs, 0);
}

describe('sim-server /generate', () => {
  test('streaming timing follows the model timeline exactly (simple profile, 20 ms steps)', async () => {
    const response = await post('/generate', { text: 'a b c', sampling_params: { max_new_tokens: 5 }, stream: true, rid: 'timing-1' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const { events } = parseSseBody(await response.text());
    expect(events).toHaveLength(5);
    const meta = events[4]!['meta_info'] as Record<string, number>;
    expect(meta['prompt_tokens']).toBe(3);
    expect(meta['completion_tokens']).toBe(5);
    expect(meta['prefill_finished_time']! - meta['forward_entry_time']!).toBeCloseTo(0.02, 6);
    expect(meta['request_finished_ts']! - meta['prefill_finished_time']!).toBeCloseTo(0.08, 6);
    expect(meta['inference_time']).toBeCloseTo(0.1, 6);
    // SGLang stamps response_sent_to_client_ts on the first streamed event; the final event repeats that time.
    const first = events[0]!['meta_info'] as Record<string, number>;
    expect(first['response_sent_to_client_ts']).toBeGreaterThanOrEqual(first['prefill_finished_time']!);
    expect(meta['response_sent_to_client_ts']).toBe(first['response_sent_to_client_ts']);
    for (const middle of events.slice(1, 4)) expect((middle['meta_info'] as Record<string, number>)['response_sent_to_client_ts']).toBeUndefined();
  });

  // On fake time (test/helpers/fake-time.ts) with the server's clock injected: a stall of the event loop is a clock
  // jump with no timer fired, put in on purpose after the tenth token, and every token's arrival is read on that clock.
  test('token gaps follow the model: a late timer does not shift the steps after it', async () => {
    useFakeTime();
    const clock = fakeTimeClock();
    const fakeServer = await startSimServer({ profile: { kind: 'simple', stepMs: 20 }, maxRunningRequests: 4, servedModelName: 'sim-fake-time', clock });
    try {
      const stallMs = 7;
      const readArrivals = async (): Promise<number[]> => {
        const response = await fetch(`${fakeServer.url}/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'tick', sampling_params: { max_new_tokens: 40 }, stream: true }) });
        const reader = response.body!.getReader();
        const arrivals: number[] = [];
        let pending = '';
        const decoder = new TextDecoder();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          pending += decoder.decode(value, { stream: true });
          const events = pending.split('\n\n');
          pending = events.pop() ?? '';
          for (const event of events) {
            if (event.includes('[DONE]')) continue;
            arrivals.push(clock.nowMs());
            if (arrivals.length === 10) vi.setSystemTime(Date.now() + stallMs);
          }
        }
        return arrivals;
      };
      const arrivals = await driveFakeTime(readArrivals());
      expect(arrivals).toHaveLength(40);
      // Token k is due 20k ms after the first on the model timeline. Fake time moves a millisecond at a time while the
      // reader takes real turns of the event loop, so a token may be read a step late; the stall's 7 ms may delay the
      // token due next, but a stepper that slept relative gaps would carry them into every later token.
      const behindMs = arrivals.map((arrivalMs, index) => arrivalMs - arrivals[0]! - 20 * index);
      expect(Math.min(...behindMs)).toBeGreaterThanOrEqual(0);
      expect(Math.max(...behindMs.slice(11))).toBeLessThanOrEqual(2);
    } finally {
      await fakeServer.close();
    }
  });

  test('non-streaming answer is one JSON with the final meta_info; x-request-id names the request', async () => {
    const response = await post('/generate', { input_ids: [5, 6, 7, 8], sampling_params: { max_new_tokens: 3 } }, { 'x-request-id': 'hdr-1' });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { text: string; output_ids: number[]; meta_info: Record<string, unknown> };
    expect(body.meta_info['id']).toBe('hdr-1');
    expect(body.meta_info['prompt_tokens']).toBe(4);
    expect(body.meta_info['finish_reason']).toEqual({ type: 'length', length: 3 });
    expect(body.text.split(' ')).toHaveLength(3);
    expect(body.output_ids).toHaveLength(3);
    expect(typeof body.meta_info['e2e_latency']).toBe('number');
  });

  test('malformed bodies get a 400 JSON error like SGLang', async () => {
    for (const body of ['{not json', { sampling_params: { max_new_tokens: 3 } }, { text: 'x', sampling_params: { max_new_tokens: -2 } }, { text: 'a', input_ids: [1] }]) {
      const response = await post('/generate', body);
      expect(response.status).toBe(400);
      const parsed = (await response.json()) as { error: { message: string } };
      expect(parsed.error.message.length).toBeGreaterThan(5);
    }
  });

  test('a prompt beyond the context length is refused with 400', async () => {
    const response = await post('/generate', { input_ids: Array.from({ length: 40_000 }, () => 1), sampling_params: { max_new_tokens: 1 } });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/context length/);
  });

  test('a client that disconnects mid-stream aborts its request', async () => {
    const controller = new AbortController();
    const response = await fetch(`${server.url}/generate`, {
      method: 'POST',
      body: JSON.stringify({ text: 'long one', sampling_params: { max_new_tokens: 10_000 }, stream: true }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    expect(await runningRequests()).toBe(1);
    controller.abort();
    await waitFor(async () => (await runningRequests()) === 0);
    expect(await runningRequests()).toBe(0);
  });

  test('with maxRunningRequests 4 the fifth concurrent request waits for a slot', async () => {
    // Four requests that would run for minutes hold the four slots; each has streamed a token, so each is running.
    const held = await holdSlots(server.url, [0, 1, 2, 3].map((index) => ({ text: `hold ${index}`, sampling_params: { max_new_tokens: 10_000 } })));
    try {
      expect(await runningRequests()).toBe(4);
      const fifth = post('/generate', { text: 'q 4', sampling_params: { max_new_tokens: 4 }, stream: true }).then((response) => response.text());
      // The server counts the fifth as waiting (get_load's num_waiting_reqs): every slot is held, so it can only wait.
      await waitFor(async () => (await waitingRequests()) === 1);
      expect(await waitingRequests()).toBe(1);
      // One slot frees; the fifth enters then, having queued since before it.
      held.free(0);
      const events = (await fifth).split('\n\n').filter((event) => event.startsWith('data: {'));
      const meta = (JSON.parse(events.at(-1)!.slice('data: '.length)) as { meta_info: Record<string, number> }).meta_info;
      expect(meta['completion_tokens']).toBe(4);
      expect(meta['queue_time']!).toBeGreaterThan(0);
    } finally {
      await held.release();
    }
    await waitFor(async () => (await runningRequests()) === 0);
  });
});

describe('sim-server OpenAI-compatible endpoints', () => {
  test('/v1/completions streams chunks and a usage chunk when asked', async () => {
    const response = await post('/v1/completions', {
      model: 'sim-test',
      prompt: 'one two three',
      max_tokens: 3,
      stream: true,
      stream_options: { include_usage: true },
    });
    const { events, sawDone } = parseSseBody(await response.text());
    expect(sawDone).toBe(true);
    expect(events).toHaveLength(4);
    const choices = events.slice(0, 3).map((event) => (event['choices'] as { text: string; finish_reason: string | null }[])[0]!);
    expect(choices.map((choice) => choice.finish_reason)).toEqual([null, null, 'length']);
    expect(events[0]!['object']).toBe('text_completion');
    expect(events[3]!['usage']).toMatchObject({ prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 });
    expect(events[3]!['choices']).toEqual([]);
  });

  test('/v1/completions without include_usage sends no usage chunk', async () => {
    const response = await post('/v1/completions', { prompt: 'x', max_tokens: 2, stream: true });
    const { events } = parseSseBody(await response.text());
    expect(events).toHaveLength(2);
    expect(events.every((event) => event['usage'] === null)).toBe(true);
  });

  test('/v1/chat/completions streams a role chunk, content deltas, and answers without streaming', async () => {
    const streamed = await post('/v1/chat/completions', {
      model: 'sim-test',
      messages: [{ role: 'user', content: 'hello there' }],
      max_tokens: 2,
      stream: true,
    });
    const { events } = parseSseBody(await streamed.text());
    const deltas = events.map((event) => (event['choices'] as { delta: Record<string, unknown> }[])[0]!.delta);
    expect(deltas[0]).toEqual({ role: 'assistant', content: '' });
    expect(deltas.slice(1).every((delta) => typeof delta['content'] === 'string')).toBe(true);
    const whole = await post('/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });
    const body = (await whole.json()) as { object: string; choices: { message: { content: string }; finish_reason: string }[]; usage: Record<string, number> };
    expect(body.object).toBe('chat.completion');
    expect(body.choices[0]!.message.content.split(' ')).toHaveLength(4);
    expect(body.choices[0]!.finish_reason).toBe('length');
    expect(body.usage['completion_tokens']).toBe(4);
  });

  test('OpenAI errors use the OpenAI error shape', async () => {
    const response = await post('/v1/chat/completions', { messages: [] });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ object: 'error', code: 400 });
  });
});

describe('sim-server operations', () => {
  test('health, health_generate, server_info and model_info (with their old names)', async () => {
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    expect((await fetch(`${server.url}/health_generate`)).status).toBe(200);
    for (const path of ['/server_info', '/get_server_info']) {
      const info = (await (await fetch(`${server.url}${path}`)).json()) as Record<string, unknown>;
      expect(info['max_running_requests']).toBe(4);
      expect(info['served_model_name']).toBe('sim-test');
    }
    for (const path of ['/model_info', '/get_model_info']) {
      const info = (await (await fetch(`${server.url}${path}`)).json()) as Record<string, unknown>;
      expect(info['is_generation']).toBe(true);
    }
  });

  test('/flush_cache answers 200 when idle and 400 while a request runs', async () => {
    expect((await post('/flush_cache', '')).status).toBe(200);
    const running = post('/generate', { text: 'busy', sampling_params: { max_new_tokens: 10 } });
    await waitFor(async () => (await runningRequests()) > 0);
    const refused = await post('/flush_cache', '');
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/#running-req: 1/);
    // ?timeout=S waits for the engine to go idle, then flushes.
    const waited = await post('/flush_cache?timeout=5', '');
    expect(waited.status).toBe(200);
    expect(await waited.text()).toMatch(/^Cache flushed\./);
    await (await running).json();
  });

  test('a repeated prompt reports cached_tokens; /flush_cache empties the cache', async () => {
    const prompt = 'the prefix cache keeps these words for the next request to reuse';
    const ask = async (): Promise<number> => {
      const response = await post('/generate', { text: prompt, sampling_params: { max_new_tokens: 1 } });
      return ((await response.json()) as { meta_info: { cached_tokens: number } }).meta_info.cached_tokens;
    };
    expect((await post('/flush_cache', '')).status).toBe(200);
    expect(await ask()).toBe(0);
    expect(await ask()).toBe(11);
    expect((await post('/flush_cache', '')).status).toBe(200);
    expect(await ask()).toBe(0);
  });

  test('/metrics exposes SGLang metric names with their labels', async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    for (const name of ['sglang:num_running_reqs', 'sglang:num_queue_reqs', 'sglang:token_usage', 'sglang:cache_hit_rate', 'sglang:gen_throughput']) {
      expect(text).toMatch(new RegExp(`^# TYPE ${name} gauge$`, 'm'));
      expect(text).toContain(`${name}{model_name="sim-test",engine_type="unified",tp_rank="0",pp_rank="0",moe_ep_rank="0"}`);
    }
    for (const name of ['sglang:time_to_first_token_seconds', 'sglang:e2e_request_latency_seconds', 'sglang:queue_time_seconds']) {
      expect(text).toMatch(new RegExp(`^# TYPE ${name} histogram$`, 'm'));
      const count = new RegExp(`^${name}_count\\{[^}]*\\} (\\d+)`, 'm').exec(text);
      expect(Number(count?.[1])).toBeGreaterThan(0);
    }
  });

  test('unknown paths answer 404', async () => {
    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
  });
});

describe('sim-server scheduler rejections', () => {
  test('a prompt the KV pool can never hold: 400 without streaming, an error event inside a stream', async () => {
    const small = await startSimServer({ profile: { kind: 'simple', stepMs: 2 }, maxTotalTokens: 100 });
    try {
      const body = { input_ids: Array.from({ length: 96 }, (_unused, index) => index), sampling_params: { max_new_tokens: 1 } };
      const whole = await fetch(`${small.url}/generate`, { method: 'POST', body: JSON.stringify(body) });
      expect(whole.status).toBe(400);
      expect(((await whole.json()) as { error: { message: string } }).error.message).toMatch(/exceeds the maximum allowed length \(94 tokens\)/);
      const streamed = await fetch(`${small.url}/generate`, { method: 'POST', body: JSON.stringify({ ...body, stream: true }) });
      const { events, sawDone } = parseSseBody(await streamed.text());
      expect(sawDone).toBe(true);
      expect(events).toHaveLength(1);
      // Today's SGLang: an event whose finish_reason is {type: "abort", message, status_code}.
      const finish = (events[0]!['meta_info'] as Record<string, unknown>)['finish_reason'] as Record<string, unknown>;
      expect(finish['type']).toBe('abort');
      expect(finish['status_code']).toBe(400);
      expect(finish['message']).toMatch(/exceeds the maximum allowed length/);
    } finally {
      await small.close();
    }
  });
});
