import { afterEach, describe, expect, test } from 'vitest';
import { measureServer } from '../../../src/engine/calibration/measure-server.js';
import { SSE_HEADERS, startScriptedServer } from '../../clients/helpers/scripted-server.js';
import type { RecordedRequest, ScriptedAnswer, ScriptedServer } from '../../clients/helpers/scripted-server.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

/** SGLang's meta_info with the --enable-metrics timestamps: 1 ms per decode step after a 2 ms prefill. */
function metaInfo(maxNewTokens: number): Record<string, number> {
  return {
    completion_tokens: maxNewTokens,
    request_received_ts: 1000,
    forward_entry_time: 1000.001,
    prefill_finished_time: 1000.003,
    request_finished_ts: 1000.003 + 0.001 * maxNewTokens,
  };
}

/**
 * A server speaking SGLang's /generate that ends its event-stream lines with `\r\n` (allowed by the event-stream
 * rules) and splits one event over two writes, and whose /flush_cache takes GET only (SGLang versions before the POST
 * route).
 */
function answer(request: RecordedRequest): ScriptedAnswer {
  if (request.path === '/server_info') {
    const info = { model_path: 'test/model', max_running_requests: 8, chunked_prefill_size: 256, context_length: 4096, max_total_num_tokens: 100_000 };
    return { headers: JSON_HEADERS, steps: [{ write: JSON.stringify(info) }, { end: true }] };
  }
  if (request.path === '/flush_cache') {
    return request.method === 'GET'
      ? { headers: JSON_HEADERS, steps: [{ write: '{}' }, { end: true }] }
      : { status: 405, headers: JSON_HEADERS, steps: [{ write: '{"detail":"Method Not Allowed"}' }, { end: true }] };
  }
  const body = request.body ?? {};
  const maxNewTokens = Number((body['sampling_params'] as Record<string, unknown>)['max_new_tokens']);
  const meta = metaInfo(maxNewTokens);
  if (body['stream'] !== true) return { headers: JSON_HEADERS, steps: [{ write: JSON.stringify({ text: 'x', meta_info: meta }) }, { end: true }] };
  const event = `data: ${JSON.stringify({ text: 'x', meta_info: meta })}\r\n\r\n`;
  const half = Math.floor(event.length / 2);
  return { headers: SSE_HEADERS, steps: [{ write: event.slice(0, half) }, { write: event.slice(half) }, { write: 'data: [DONE]\r\n\r\n' }, { end: true }] };
}

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("calibration's HTTP client", () => {
  test('reads an event stream with \\r\\n line ends split across chunks (the project\'s SSE parser)', async () => {
    server = await startScriptedServer(answer);
    const measured = await measureServer({ url: server.url, repeats: 1, decodeTokens: 4, promptLengths: [64], batchSizes: [2], concurrencyPromptLengths: [32], mixedSweep: false });
    // The streamed probe's meta_info carried the timestamps: a parser that missed its events would fall back to client times.
    expect(measured.usedServerTimestamps).toBe(true);
    expect(server.requests.some((request) => request.path === '/generate' && request.body?.['stream'] === true)).toBe(true);
    const prefill = measured.observations.find((observation) => observation.label.startsWith('prefill'));
    expect(prefill?.stepMs).toBeCloseTo(2, 3);
  });

  test('flushes the cache through the one flush_cache, which falls back to GET where POST is refused', async () => {
    server = await startScriptedServer(answer);
    await measureServer({ url: server.url, repeats: 1, decodeTokens: 4, promptLengths: [64], batchSizes: [2], concurrencyPromptLengths: [32], mixedSweep: false });
    const flushes = server.requests.filter((request) => request.path === '/flush_cache');
    expect(flushes.filter((request) => request.method === 'GET').length).toBeGreaterThan(0);
  });
});
