import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock/clock.js';
import { createProtocolClient } from '../../src/clients/registry.js';
import type { ClientRequest } from '../../src/types/client.js';
import { requestFor, runClientConformance } from './conformance.js';
import { sendOnce } from './helpers/one-shot.js';
import { startScriptedServer } from './helpers/scripted-server.js';
import { sglang2025Wire, sglang2026Wire, sglangWire } from './helpers/wires.js';

// The suite runs on a server without timing keys and on each SGLang generation's key set.
runClientConformance(sglangWire, 'socket');
runClientConformance(sglangWire, 'undici');
runClientConformance(sglang2026Wire, 'socket');
runClientConformance(sglang2025Wire, 'undici');

describe('sglang /generate specifics', () => {
  const finalEvent = sglangWire.tokenEvent(2, { finish: 'length' });

  it('sends text or input_ids with sampling_params, stream and rid', async () => {
    const text = await sendOnce('sglang', requestFor('rid-text'), [finalEvent, '[DONE]'], {
      sampling: { temperature: 0.7, ignoreEos: false },
    });
    expect(text.sent.body).toEqual({
      text: 'one two three four five six seven eight',
      sampling_params: { max_new_tokens: 32, ignore_eos: false, temperature: 0.7 },
      stream: true,
      rid: 'rid-text',
    });
    const ids: ClientRequest = {
      requestId: 'rid-ids',
      workload: { datasetIndex: 3, inputIds: [5, 6, 7], inputLength: 3, outputLength: 9 },
    };
    const sentIds = await sendOnce('sglang', ids, [finalEvent, '[DONE]']);
    expect(sentIds.sent.body?.['input_ids']).toEqual([5, 6, 7]);
    expect(sentIds.sent.body?.['text']).toBeUndefined();
    expect(sentIds.sent.body?.['rid']).toBe('rid-ids');
    expect(sentIds.sent.headers['x-request-id']).toBe('rid-ids');
  });

  it('reads server timing keys by presence, on whichever event carries them', async () => {
    const meta = (completionTokens: number, extra: Record<string, unknown>) =>
      JSON.stringify({
        text: 'x',
        meta_info: { id: 'r', finish_reason: null, prompt_tokens: 4, completion_tokens: completionTokens, cached_tokens: 1, ...extra },
      });
    const { outcome } = await sendOnce('sglang', requestFor('rid-keys'), [
      meta(0, {}), // an event before any token: not the first token
      meta(1, { forward_entry_time: 100.5, queue_time: 0.25 }),
      meta(2, { prefill_finished_time: 100.75, forward_entry_time: 100.5 }),
      JSON.stringify({
        text: 'xyz',
        meta_info: {
          id: 'r',
          finish_reason: { type: 'stop', matched: 2 },
          prompt_tokens: 4,
          completion_tokens: 3,
          cached_tokens: 1,
          request_received_ts: 100.1,
          response_sent_to_client_ts: 101.0,
          total_retractions: 2,
        },
      }),
      '[DONE]',
    ]);
    expect(outcome.success).toBe(true);
    expect(outcome.serverCreatedTime).toBe(100.1);
    expect(outcome.queueTimeEnd).toBe(100.5);
    expect(outcome.queueTimeStart).toBeCloseTo(100.25, 9);
    expect(outcome.serverFirstTokenTime).toBe(100.75);
    expect(outcome.numRetractions).toBe(2);
    expect(outcome.finishReason).toBe('stop');
    expect(outcome.interTokenLatencies).toHaveLength(2);
  });

  it('never puts the queue start before the request was received by float rounding alone (epoch-sized timestamps)', async () => {
    // As a server computes them from one clock in milliseconds: queued the instant the request was received.
    const receivedMs = 1_763_700_000_632.8176;
    const forwardEntryMs = 1_763_700_000_635.492;
    const received = receivedMs / 1000;
    const forwardEntry = forwardEntryMs / 1000;
    const queueTime = (forwardEntryMs - receivedMs) / 1000;
    expect(forwardEntry - queueTime).toBeLessThan(received); // the subtraction lands a fraction of a microsecond early
    const final = (extra: Record<string, unknown>) =>
      JSON.stringify({ text: 'xy', meta_info: { id: 'r', finish_reason: { type: 'length' }, completion_tokens: 2, ...extra } });
    const first = JSON.stringify({ text: 'x', meta_info: { id: 'r', finish_reason: null, completion_tokens: 1, forward_entry_time: forwardEntry, queue_time: queueTime } });
    const { outcome } = await sendOnce('sglang', requestFor('rid-float'), [first, final({ request_received_ts: received }), '[DONE]']);
    expect(outcome.queueTimeStart).toBe(received);
    // A real gap (here 5 µs the other way) is kept as measured.
    const early = await sendOnce('sglang', requestFor('rid-gap'), [
      JSON.stringify({ text: 'x', meta_info: { id: 'r', finish_reason: null, completion_tokens: 1, forward_entry_time: forwardEntry, queue_time: queueTime + 5e-6 } }),
      final({ request_received_ts: received }),
      '[DONE]',
    ]);
    expect(received - (early.outcome.queueTimeStart as number)).toBeGreaterThan(4e-6);
  });

  it('reads response_sent_to_client_ts as SGLang sets it: the first event of a stream, the whole answer otherwise', async () => {
    const event = (completionTokens: number, finish: boolean, extra: Record<string, unknown>) =>
      JSON.stringify({
        text: 'x',
        meta_info: { id: 'r', finish_reason: finish ? { type: 'length' } : null, completion_tokens: completionTokens, ...extra },
      });
    // Without --enable-metrics the key rides on the first streamed event only: the first-token fallback (docs/metrics.md).
    const onFirst = await sendOnce('sglang', requestFor('rid-fallback'), [
      event(1, false, { response_sent_to_client_ts: 50.5 }),
      event(2, true, {}),
      '[DONE]',
    ]);
    expect(onFirst.outcome.serverFirstTokenTime).toBe(50.5);
    expect(onFirst.outcome.serverResponseSentTime).toBe(50.5);
    // With it, the final event repeats the first event's stamp: the same instant, not the finish.
    const repeated = await sendOnce('sglang', requestFor('rid-repeat'), [
      event(1, false, { response_sent_to_client_ts: 50.5 }),
      event(2, true, { response_sent_to_client_ts: 50.5, request_finished_ts: 52.0 }),
      '[DONE]',
    ]);
    expect(repeated.outcome.serverResponseSentTime).toBe(50.5);
    expect(repeated.outcome.serverFinishTime).toBe(52.0);
    // A whole answer is stamped when it leaves: that is no first-token time.
    const server = await startScriptedServer(() => ({
      headers: { 'content-type': 'application/json' },
      steps: [{ write: event(2, true, { response_sent_to_client_ts: 51.5 }) }, { end: true }],
    }));
    const client = createProtocolClient('sglang', { baseUrl: server.url, stream: false, sampling: { temperature: 0, ignoreEos: true }, clock: systemClock });
    const whole = await client.send(requestFor('rid-whole'));
    await client.close();
    await server.close();
    expect(whole.success).toBe(true);
    expect(whole.serverResponseSentTime).toBe(51.5);
    expect(whole.serverFirstTokenTime).toBeUndefined();
    expect(whole.serverCreatedTime).toBeUndefined();
  });

  it('reads the 2026 prefill latencies even when the scheduler sends them null at first, and still scans later events', async () => {
    const event = (completionTokens: number, extra: Record<string, unknown>) =>
      JSON.stringify({ text: 'x'.repeat(completionTokens), meta_info: { id: 'r', finish_reason: null, completion_tokens: completionTokens, ...extra } });
    const scheduled = { forward_entry_time: 10.5, prefill_finished_time: 10.75, queue_time: 0.25 };
    const { outcome } = await sendOnce('sglang', requestFor('rid-latencies'), [
      event(1, { ...scheduled, prefill_waiting_latency: null, prefill_launch_latency: null }),
      event(2, { ...scheduled, prefill_waiting_latency: 0.001, prefill_launch_latency: 0.002 }),
      JSON.stringify({ text: 'xxx', meta_info: { id: 'r', finish_reason: { type: 'length' }, completion_tokens: 3, ...scheduled, prefill_waiting_latency: 0.001, prefill_launch_latency: 0.002 } }),
      '[DONE]',
    ]);
    expect(outcome.success).toBe(true);
    expect(outcome.prefillWaitingLatency).toBe(0.001);
    expect(outcome.prefillLaunchLatency).toBe(0.002);
    expect(outcome.actualOutputTokens).toBe(3);
  });

  it('fails an abort event with its status code and message', async () => {
    const { outcome } = await sendOnce('sglang', requestFor('rid-abort'), [
      JSON.stringify({
        text: '',
        meta_info: { id: 'rid-abort', finish_reason: { type: 'abort', message: 'The server is overloaded.', status_code: 503 }, completion_tokens: 0 },
      }),
      '[DONE]',
    ]);
    expect(outcome.success).toBe(false);
    expect(outcome.error).toBe('server_error');
    expect(outcome.serverStatusCode).toBe(503);
    expect(outcome.httpStatus).toBe(200);
    expect(outcome.errorMessage).toBe('the server aborted the request (status 503): The server is overloaded.');
    expect(outcome.finishReason).toBe('abort');
  });

  it('reports an event without meta_info as malformed_stream', async () => {
    const { outcome } = await sendOnce('sglang', requestFor('rid-no-meta'), ['{"text":"x"}', '[DONE]']);
    expect(outcome.error).toBe('malformed_stream');
  });

  it('refuses a chat-only workload with a clear configuration error', async () => {
    const client = createProtocolClient('sglang', {
      baseUrl: 'http://127.0.0.1:9',
      stream: true,
      sampling: { temperature: 0, ignoreEos: true },
      clock: systemClock,
    });
    const chatOnly: ClientRequest = {
      requestId: 'rid-chat',
      workload: { datasetIndex: 0, messages: [{ role: 'user', content: 'hi' }], inputLength: 1, outputLength: 1 },
    };
    await expect(client.send(chatOnly)).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    await client.close();
  });
});
