import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSimServer } from '../../src/engine/http/start-sim-server.js';
import type { RunningSimServer } from '../../src/engine/http/start-sim-server.js';
import { check2026GenerateStream, checkGenerateStream, describeGenerateStreamConformance, parseSseBody } from '../conformance/sglang-server-api.js';
import { holdSlots } from './helpers/hold-slots.js';

// The simulated engine follows the 2026 key set; the 2025 set is the client's concern (test/clients).
const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'streams', 'sglang-2026');

describe('SGLang /generate stream conformance: the simulated engine', () => {
  let server: RunningSimServer;
  beforeAll(async () => {
    server = await startSimServer({ profile: { kind: 'simple', stepMs: 4 }, maxRunningRequests: 3, chunkedPrefillSize: 16 });
  });
  afterAll(async () => {
    await server.close();
  });

  async function streamGenerate(body: Record<string, unknown>): Promise<string> {
    const response = await fetch(`${server.url}/generate`, { method: 'POST', body: JSON.stringify({ ...body, stream: true }) });
    expect(response.status).toBe(200);
    return response.text();
  }

  test('one request conforms, with its rid and exact token count', async () => {
    const body = await streamGenerate({ text: 'what is the capital of france', sampling_params: { max_new_tokens: 12 }, rid: 'conf-1' });
    expect(checkGenerateStream(body, { completionTokens: 12, requestId: 'conf-1' })).toEqual([]);
  });

  test('concurrent requests with queueing and chunked prefill all conform', async () => {
    const bodies = await Promise.all(
      Array.from({ length: 8 }, (_unused, index) =>
        streamGenerate({
          input_ids: Array.from({ length: 10 + index * 7 }, (_value, position) => position + index),
          sampling_params: { max_new_tokens: 3 + index },
          rid: `conf-many-${index}`,
        }),
      ),
    );
    bodies.forEach((body, index) => {
      expect(checkGenerateStream(body, { completionTokens: 3 + index, requestId: `conf-many-${index}` })).toEqual([]);
    });
  });

  test('a request that arrives while every running slot is taken reports the time it queued', async () => {
    const waiting = async (): Promise<number> => {
      const ranks = (await (await fetch(`${server.url}/get_load`)).json()) as { num_waiting_reqs: number }[];
      return ranks.reduce((sum, rank) => sum + rank.num_waiting_reqs, 0);
    };
    // Three requests that would run for minutes take the three slots; each has streamed a token, so each is running.
    const held = await holdSlots(
      server.url,
      [0, 1, 2].map((index) => ({ input_ids: [1, 2, 3], sampling_params: { max_new_tokens: 5_000 }, rid: `blocker-${index}` })),
    );
    try {
      const queued = streamGenerate({ input_ids: [4, 5, 6], sampling_params: { max_new_tokens: 2 }, rid: 'queued-1' });
      // The server counts it as waiting: every slot is held, so it can enter only when one is freed.
      for (let poll = 0; poll < 200 && (await waiting()) !== 1; poll++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await waiting()).toBe(1);
      held.free(0);
      const body = await queued;
      expect(checkGenerateStream(body, { completionTokens: 2, requestId: 'queued-1' })).toEqual([]);
      const events = parseSseBody(body).events;
      const meta = events[events.length - 1]!['meta_info'] as Record<string, number>;
      // It entered when the aborted blocker left, after it had arrived: it queued for a time above zero.
      expect(meta['queue_time']).toBeGreaterThan(0);
    } finally {
      await held.release();
    }
  });

  test('the suite catches broken streams', () => {
    const good = 'data: {"text":"a","meta_info":{"id":"x","finish_reason":null,"prompt_tokens":1,"completion_tokens":1,"cached_tokens":0}}\n\n';
    expect(checkGenerateStream(good, { timingKeys: false }).join('\n')).toMatch(/never sent data: \[DONE\]/);
    expect(checkGenerateStream(`${good}data: [DONE]\n\n`, { timingKeys: false }).join('\n')).toMatch(/finish_reason is not set/);
    const shrinking =
      good +
      'data: {"text":"b","meta_info":{"id":"x","finish_reason":{"type":"length","length":0},"prompt_tokens":1,"completion_tokens":0,"cached_tokens":0,"e2e_latency":1}}\n\ndata: [DONE]\n\n';
    const problems = checkGenerateStream(shrinking, { timingKeys: false }).join('\n');
    expect(problems).toMatch(/not cumulative/);
    expect(problems).toMatch(/completion_tokens went down/);
  });
});

describe('the shared live-server suite against the simulator', () => {
  let server: RunningSimServer;
  beforeAll(async () => {
    server = await startSimServer({ profile: { kind: 'simple', stepMs: 3 } });
  });
  afterAll(async () => {
    await server.close();
  });
  describeGenerateStreamConformance('sim-server (simple profile)', () => server.url);
});

describe('SGLang /generate stream conformance: recorded SGLang streams', () => {
  const files = readdirSync(FIXTURES).filter((file) => file.startsWith('generate-') && file.endsWith('.sse'));

  test('there are recorded streams to check', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  for (const file of files) {
    test(file, () => {
      const body = readFileSync(join(FIXTURES, file), 'utf8');
      const problems = checkGenerateStream(body, { timingKeys: file.includes('enable-metrics') });
      if (file.includes('error-event')) {
        // A mid-stream error is SGLang's way to fail a stream; the suite must flag it.
        expect(problems.join('\n')).toMatch(/error event/);
      } else {
        expect(problems).toEqual([]);
      }
    });
  }
});

/**
 * The simulator against today's SGLang (2026 source: req_time_stats.py, tokenizer_manager.py, load_snapshot.py,
 * http_server.py, serving_base.py of sgl-project/sglang; see docs/simulated-engine.md for what it deliberately omits).
 */
describe('the simulated engine follows 2026 SGLang', () => {
  let server: RunningSimServer;
  beforeAll(async () => {
    server = await startSimServer({ profile: { kind: 'simple', stepMs: 3 }, maxTotalTokens: 200 });
  });
  afterAll(async () => {
    await server.close();
  });
  const post = (path: string, body: unknown, target = server): Promise<Response> =>
    fetch(`${target.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });

  test('stream keys and their instants: response_sent_to_client_ts on the first event, 2026 keys present', async () => {
    const body = await (await post('/generate', { text: 'first event stamp', sampling_params: { max_new_tokens: 6 }, stream: true })).text();
    expect(check2026GenerateStream(body)).toEqual([]);
    expect(checkGenerateStream(body, { completionTokens: 6 })).toEqual([]);
    // The suite is not vacuous: a 2025-style stream (stamp only at the end) fails it.
    const events = parseSseBody(body).events;
    const stale = events.map((event, index) => {
      const meta = { ...(event['meta_info'] as Record<string, unknown>) };
      if (index === 0) delete meta['response_sent_to_client_ts'];
      return `data: ${JSON.stringify({ ...event, meta_info: meta })}\n\n`;
    });
    expect(check2026GenerateStream(`${stale.join('')}data: [DONE]\n\n`).join('\n')).toMatch(/first event: response_sent_to_client_ts missing/);
  });

  test('/get_load counts waiting requests in num_reqs and waiting prompts in num_tokens; /v1/loads has the core keys', async () => {
    const idle = (await (await fetch(`${server.url}/get_load`)).json()) as Record<string, number>[];
    expect(idle).toEqual([{ dp_rank: 0, num_reqs: 0, num_waiting_reqs: 0, num_tokens: expect.any(Number) as number }]);
    const loads = (await (await fetch(`${server.url}/v1/loads?include=core`)).json()) as { timestamp: string; version: string; loads: Record<string, number>[] };
    expect(Number.isNaN(Date.parse(loads.timestamp))).toBe(false);
    expect(Object.keys(loads.loads[0]!).sort()).toEqual(
      ['cache_hit_rate', 'dp_rank', 'gen_throughput', 'max_running_requests', 'max_total_num_tokens', 'num_running_reqs', 'num_total_tokens', 'num_used_tokens', 'num_waiting_reqs', 'num_waiting_uncached_tokens', 'token_usage', 'utilization'].sort(),
    );
    expect(loads.loads[0]!['max_total_num_tokens']).toBe(200);
  });

  test('OpenAI streams: usage on every chunk with continuous_usage_stats; cached tokens only with --enable-cache-report', async () => {
    const request = { model: 'x', prompt: 'one two three', max_tokens: 4, stream: true, stream_options: { include_usage: true, continuous_usage_stats: true } };
    const { events } = parseSseBody(await (await post('/v1/completions', request)).text());
    const withChoices = events.filter((event) => (event['choices'] as unknown[]).length > 0);
    expect(withChoices.map((event) => (event['usage'] as Record<string, number>)['completion_tokens'])).toEqual([1, 2, 3, 4]);
    const final = events[events.length - 1]!['usage'] as Record<string, unknown>;
    expect(final['prompt_tokens_details']).toBeNull();
    const reporting = await startSimServer({ profile: { kind: 'simple', stepMs: 3 }, enableCacheReport: true });
    try {
      const answer = (await (await post('/v1/completions', { model: 'x', prompt: 'one two three', max_tokens: 2 }, reporting)).json()) as { usage: Record<string, unknown> };
      expect(answer.usage['prompt_tokens_details']).toEqual({ cached_tokens: expect.any(Number) as number });
    } finally {
      await reporting.close();
    }
  });

  test('error shapes: abort event in a /generate stream, {"error": {...}} in an OpenAI stream, 400 for bad JSON', async () => {
    const tooLong = Array.from({ length: 199 }, (_unused, index) => index);
    const generate = parseSseBody(await (await post('/generate', { input_ids: tooLong, sampling_params: { max_new_tokens: 1 }, stream: true })).text()).events;
    expect((generate[0]!['meta_info'] as Record<string, unknown>)['finish_reason']).toEqual({ type: 'abort', message: expect.any(String) as string, status_code: 400, err_type: 'BadRequestError' });
    const chat = parseSseBody(await (await post('/v1/completions', { model: 'x', prompt: tooLong, max_tokens: 1, stream: true })).text()).events;
    expect(chat.at(-1)).toEqual({ error: { object: 'error', message: expect.any(String) as string, type: 'BadRequestError', param: null, code: 400 } });
    for (const path of ['/generate', '/v1/completions', '/v1/chat/completions']) expect((await post(path, '{not json')).status).toBe(400);
  });

  test('/health is 503 while starting and while shutting down', async () => {
    const starting = await startSimServer({ profile: { kind: 'simple', stepMs: 3 }, startupDelayMs: 150, returnBeforeReady: true });
    try {
      expect((await fetch(`${starting.url}/health`)).status).toBe(503);
      await starting.ready;
      expect((await fetch(`${starting.url}/health`)).status).toBe(200);
      starting.beginShutdown();
      expect((await fetch(`${starting.url}/health`)).status).toBe(503);
      expect((await fetch(`${starting.url}/health_generate`)).status).toBe(503);
    } finally {
      await starting.close();
    }
  });
});
