import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSimServer } from '../../src/engine/http/start-sim-server.js';
import type { RunningSimServer } from '../../src/engine/http/start-sim-server.js';
import { checkGenerateStream, describeGenerateStreamConformance, parseSseBody } from '../conformance/sglang-server-api.js';

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
    // Someone had to wait: with 3 running slots, 8 requests cannot all start at once.
    const queueTimes = bodies.map((body) => {
      const events = parseSseBody(body).events;
      return (events[events.length - 1]!['meta_info'] as Record<string, number>)['queue_time']!;
    });
    expect(Math.max(...queueTimes)).toBeGreaterThan(0.004);
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
