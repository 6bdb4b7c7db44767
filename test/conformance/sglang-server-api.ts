import { describe, expect, test } from 'vitest';

/**
 * A reusable conformance check for SGLang's streaming `/generate` answer (docs/protocols.md), applied both to live servers (the
 * simulated engine) and to streams recorded from real SGLang servers (test/fixtures/streams/sglang-2026/). It returns the
 * list of violations instead of throwing, so a test can show every problem at once.
 */

export interface GenerateStreamExpectations {
  /** The server ran with --enable-metrics: every event must carry the scheduler timing keys. Default true. */
  timingKeys?: boolean;
  /** Exact number of generated tokens expected at the end (max_new_tokens with ignore_eos). */
  completionTokens?: number;
  /** The request id the client set (rid / x-request-id). */
  requestId?: string;
  /** Tolerance for timestamp ordering, seconds: SGLang converts perf_counter readings to epoch with a calibrated offset. */
  toleranceSeconds?: number;
}

export interface ParsedStream {
  events: Record<string, unknown>[];
  sawDone: boolean;
  problems: string[];
}

/** Splits an SSE body into JSON events (`data: {json}\n\n`) and the final `data: [DONE]\n\n`. */
export function parseSseBody(rawBody: string): ParsedStream {
  // SSE allows CRLF line ends; older servers and proxies send them.
  const body = rawBody.replace(/\r\n/g, '\n');
  const problems: string[] = [];
  const events: Record<string, unknown>[] = [];
  let sawDone = false;
  if (!body.endsWith('\n\n')) problems.push('the stream does not end with a blank line after its last event');
  const blocks = body.split('\n\n');
  if (blocks[blocks.length - 1] === '') blocks.pop();
  blocks.forEach((block, index) => {
    if (sawDone) {
      problems.push(`event ${index} comes after data: [DONE]`);
      return;
    }
    if (!block.startsWith('data: ')) {
      problems.push(`event ${index} is not framed as "data: ...": ${JSON.stringify(block.slice(0, 60))}`);
      return;
    }
    if (block.includes('\n')) problems.push(`event ${index} spans several lines`);
    const payload = block.slice('data: '.length);
    if (payload === '[DONE]') {
      sawDone = true;
      return;
    }
    try {
      const parsed = JSON.parse(payload) as unknown;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        problems.push(`event ${index} is not a JSON object`);
      } else {
        events.push(parsed as Record<string, unknown>);
      }
    } catch {
      problems.push(`event ${index} is not valid JSON`);
    }
  });
  if (!sawDone) problems.push('the stream never sent data: [DONE]');
  return { events, sawDone, problems };
}

const EVERY_EVENT_TIMING_KEYS = ['forward_entry_time', 'prefill_finished_time', 'queue_time'] as const;
const LAST_EVENT_TIMING_KEYS = [
  'request_received_ts',
  'response_sent_to_client_ts',
  'request_finished_ts',
  'inference_time',
] as const;

/** Checks a streamed `/generate` body against docs/protocols.md; returns the violations (empty when it conforms). */
export function checkGenerateStream(body: string, expectations: GenerateStreamExpectations = {}): string[] {
  const timingKeys = expectations.timingKeys ?? true;
  const tolerance = expectations.toleranceSeconds ?? 0.002;
  const { events, problems } = parseSseBody(body);
  if (events.length === 0) {
    problems.push('the stream has no JSON events');
    return problems;
  }
  let previousText = '';
  let previousCompletion = -1;
  let id: unknown;
  events.forEach((event, index) => {
    const where = `event ${index}`;
    const isLast = index === events.length - 1;
    if ('error' in event) {
      problems.push(`${where} is an error event: ${JSON.stringify(event['error'])}`);
      return;
    }
    const text = event['text'];
    if (typeof text !== 'string') problems.push(`${where} has no string "text"`);
    else {
      if (!text.startsWith(previousText)) problems.push(`${where}: text is not cumulative (does not extend the previous)`);
      previousText = text;
    }
    const meta = event['meta_info'];
    if (typeof meta !== 'object' || meta === null) {
      problems.push(`${where} has no meta_info object`);
      return;
    }
    const info = meta as Record<string, unknown>;
    for (const key of ['id', 'prompt_tokens', 'completion_tokens', 'cached_tokens']) {
      if (!(key in info)) problems.push(`${where}: meta_info lacks ${key}`);
    }
    if (!('finish_reason' in info)) problems.push(`${where}: meta_info lacks finish_reason`);
    if (index === 0) id = info['id'];
    else if (info['id'] !== id) problems.push(`${where}: meta_info.id changed from ${String(id)} to ${String(info['id'])}`);
    const completion = info['completion_tokens'];
    if (typeof completion !== 'number' || !Number.isInteger(completion)) {
      problems.push(`${where}: completion_tokens is not an integer`);
    } else {
      if (completion < previousCompletion) problems.push(`${where}: completion_tokens went down`);
      previousCompletion = completion;
    }
    const finish = info['finish_reason'];
    if (!isLast && finish !== null) problems.push(`${where}: finish_reason is set before the last event`);
    if (isLast) {
      if (finish === null || typeof finish !== 'object') problems.push('last event: finish_reason is not set');
      else {
        const reason = finish as Record<string, unknown>;
        if (!['length', 'stop', 'abort'].includes(String(reason['type']))) {
          problems.push(`last event: finish_reason.type is ${String(reason['type'])}`);
        }
        if (reason['type'] === 'length' && reason['length'] !== completion) {
          problems.push(`last event: finish_reason.length ${String(reason['length'])} != completion_tokens ${String(completion)}`);
        }
      }
      if (typeof info['e2e_latency'] !== 'number') problems.push('last event: e2e_latency missing');
    }
    if (timingKeys) {
      for (const key of EVERY_EVENT_TIMING_KEYS) {
        if (typeof info[key] !== 'number') problems.push(`${where}: timing key ${key} missing`);
      }
      if (isLast) {
        for (const key of LAST_EVENT_TIMING_KEYS) {
          if (typeof info[key] !== 'number') problems.push(`last event: timing key ${key} missing`);
        }
        problems.push(...checkTimingOrder(info, tolerance));
      }
    }
  });
  if (expectations.completionTokens !== undefined && previousCompletion !== expectations.completionTokens) {
    problems.push(`completion_tokens ended at ${previousCompletion}, expected ${expectations.completionTokens}`);
  }
  if (expectations.requestId !== undefined && id !== expectations.requestId) {
    problems.push(`meta_info.id is ${String(id)}, expected the client's rid ${expectations.requestId}`);
  }
  return problems;
}

/** Keys 2026 SGLang adds to every event (None → null until the prefill has run) and to the last event. */
const EVERY_EVENT_2026_KEYS = ['prefill_waiting_latency', 'prefill_launch_latency'] as const;
const LAST_EVENT_2026_KEYS = ['api_server_dispatch_finish_ts', 'decode_throughput'] as const;

/**
 * The 2026 generation's stream facts (python/sglang/srt/observability/req_time_stats.py and tokenizer_manager.py of
 * today's SGLang): the scheduler's prefill_waiting_latency and prefill_launch_latency on every event,
 * api_server_dispatch_finish_ts and decode_throughput on the last, and response_sent_to_client_ts stamped when the
 * first event is sent, the last event repeating that first-event time.
 */
export function check2026GenerateStream(body: string): string[] {
  const { events, problems } = parseSseBody(body);
  const metas = events.map((event) => (event['meta_info'] ?? {}) as Record<string, unknown>);
  if (metas.length === 0) return [...problems, 'the stream has no JSON events'];
  metas.forEach((meta, index) => {
    for (const key of EVERY_EVENT_2026_KEYS) {
      if (!(key in meta)) problems.push(`event ${index}: ${key} missing`);
      else if (meta[key] !== null && typeof meta[key] !== 'number') problems.push(`event ${index}: ${key} is neither a number nor null`);
    }
    if (typeof meta['prefill_finished_time'] === 'number' && typeof meta['prefill_launch_latency'] !== 'number') {
      problems.push(`event ${index}: the prefill has finished but prefill_launch_latency is not set`);
    }
  });
  const first = metas[0] as Record<string, unknown>;
  const last = metas[metas.length - 1] as Record<string, unknown>;
  for (const key of LAST_EVENT_2026_KEYS) if (typeof last[key] !== 'number') problems.push(`last event: ${key} missing`);
  const sent = first['response_sent_to_client_ts'];
  if (typeof sent !== 'number') problems.push('first event: response_sent_to_client_ts missing (SGLang stamps it when the first event is sent)');
  else {
    if (last['response_sent_to_client_ts'] !== sent) problems.push('last event: response_sent_to_client_ts does not repeat the first event\'s');
    // (Not compared with request_finished_ts: a server whose HTTP side lags its scheduler may send the first event
    // after the scheduler finished the request.)
    if (typeof last['request_received_ts'] === 'number' && sent < (last['request_received_ts'] as number)) {
      problems.push('response_sent_to_client_ts is before request_received_ts');
    }
  }
  return problems;
}

/** request_received_ts <= queue start <= forward_entry_time <= prefill_finished_time <= request_finished_ts. */
export function checkTimingOrder(info: Record<string, unknown>, toleranceSeconds: number): string[] {
  const received = info['request_received_ts'];
  const forward = info['forward_entry_time'];
  const queueTime = info['queue_time'];
  const prefill = info['prefill_finished_time'];
  const finished = info['request_finished_ts'];
  if (![received, forward, queueTime, prefill, finished].every((value) => typeof value === 'number')) return [];
  const queueStart = (forward as number) - (queueTime as number);
  const chain: [string, number][] = [
    ['request_received_ts', received as number],
    ['queue start (forward_entry_time - queue_time)', queueStart],
    ['forward_entry_time', forward as number],
    ['prefill_finished_time', prefill as number],
    ['request_finished_ts', finished as number],
  ];
  const problems: string[] = [];
  for (let index = 1; index < chain.length; index++) {
    const [earlierName, earlier] = chain[index - 1] as [string, number];
    const [laterName, later] = chain[index] as [string, number];
    if (later + toleranceSeconds < earlier) problems.push(`timing order: ${laterName} (${later}) < ${earlierName} (${earlier})`);
  }
  return problems;
}

/**
 * Registers the live-server conformance tests for any SGLang-compatible server (the simulator, a stand-in, or a real
 * SGLang when one is available): call it inside a test file, with a function that returns the server's base URL once
 * it is up (e.g. from beforeAll).
 */
export function describeGenerateStreamConformance(
  name: string,
  baseUrl: () => string,
  options: { timingKeys?: boolean } = {},
): void {
  describe(`SGLang /generate stream conformance: ${name}`, () => {
    const stream = async (body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> => {
      const response = await fetch(`${baseUrl()}/generate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ ...body, stream: true }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type') ?? '').toContain('text/event-stream');
      return response.text();
    };

    test('a text prompt streams cumulative text to exactly max_new_tokens, ids from rid', async () => {
      const body = await stream({ text: 'conformance check of the stream', sampling_params: { max_new_tokens: 7, ignore_eos: true }, rid: 'conformance-rid' });
      expect(checkGenerateStream(body, { completionTokens: 7, requestId: 'conformance-rid', timingKeys: options.timingKeys })).toEqual([]);
    });

    test('input_ids and the x-request-id header', async () => {
      const body = await stream({ input_ids: [11, 12, 13, 14, 15], sampling_params: { max_new_tokens: 3, ignore_eos: true } }, { 'x-request-id': 'conformance-header' });
      expect(checkGenerateStream(body, { completionTokens: 3, requestId: 'conformance-header', timingKeys: options.timingKeys })).toEqual([]);
    });
  });
}
