import { request } from 'undici';
import type { Clock } from '../../clock/clock.js';
import { flushCacheOnce } from '../../clients/common/flush-cache.js';
import { DEFAULT_MAX_SSE_EVENT_BYTES, SseParser } from '../../clients/sse/sse-parser.js';
import { ServelabError } from '../../errors/servelab-error.js';

/**
 * Calibration's own HTTP client for an SGLang server (or a servelab sim-server): its limits from /server_info, a cache
 * flush, and one /generate request timed by chunk arrival. It keeps only what the step-time sweeps read: the instants
 * of the first and last events, and the final meta_info.
 */

export interface ServerLimits {
  modelPath: string;
  maxRunningRequests: number;
  chunkedPrefillSize: number;
  contextLength: number;
  maxTotalTokens: number;
  /** KV tokens per page (`page_size`, one of SGLang's server args in /server_info); absent where the info has none. */
  pageSize?: number;
  /**
   * The limits the server's info named itself (the rest are fallbacks: 256 running requests, 8192-token chunks,
   * 100,000 KV tokens). Absent in measurement files from before it was recorded.
   */
  reported?: { maxRunningRequests: boolean; chunkedPrefillSize: boolean; maxTotalTokens: boolean };
}

/** One /generate answer: client instants (the calibration's clock, ms) and the last meta_info the server sent. */
export interface StreamResult {
  sentMs: number;
  firstEventMs: number;
  lastEventMs: number;
  completionTokens: number;
  meta: Record<string, unknown>;
}

/** The server's limits, from /server_info (or the older /get_server_info), with fallbacks where a field is absent. */
export async function readLimits(baseUrl: string): Promise<ServerLimits> {
  let info: Record<string, unknown> = {};
  for (const path of ['/server_info', '/get_server_info']) {
    try {
      const response = await request(`${baseUrl}${path}`);
      if (response.statusCode >= 200 && response.statusCode < 300) {
        info = (await response.body.json()) as Record<string, unknown>;
        break;
      }
      await response.body.dump();
    } catch (error) {
      throw new ServelabError('UNREACHABLE', `cannot reach ${baseUrl}: ${(error as Error).message}; is the server up?`, {
        cause: error,
      });
    }
  }
  const internal = Array.isArray(info['internal_states']) ? (info['internal_states'][0] as Record<string, unknown>) : {};
  const number = (...values: unknown[]): number | undefined =>
    values.find((value): value is number => typeof value === 'number' && Number.isFinite(value) && value > 0);
  const maxRunningRequests = number(info['max_running_requests'], internal['max_running_requests']);
  const chunkedPrefillSize = number(info['chunked_prefill_size']);
  const maxTotalTokens = number(info['max_total_num_tokens'], internal['max_total_num_tokens'], info['max_total_tokens']);
  const pageSize = number(info['page_size']);
  return {
    modelPath: typeof info['model_path'] === 'string' ? info['model_path'] : 'unknown',
    maxRunningRequests: maxRunningRequests ?? 256,
    chunkedPrefillSize: chunkedPrefillSize ?? 8192,
    contextLength: number(info['context_length'], internal['context_length']) ?? 8192,
    maxTotalTokens: maxTotalTokens ?? 100_000,
    ...(pageSize === undefined || !Number.isInteger(pageSize) ? {} : { pageSize }),
    reported: { maxRunningRequests: maxRunningRequests !== undefined, chunkedPrefillSize: chunkedPrefillSize !== undefined, maxTotalTokens: maxTotalTokens !== undefined },
  };
}

/** Best effort: random prompts rarely share prefixes anyway, so a server that refuses a flush is still measured. */
export async function flushCache(baseUrl: string): Promise<void> {
  await flushCacheOnce(baseUrl);
}

/**
 * One /generate request for `maxNewTokens` tokens (ignore_eos, greedy). Streamed, its events are timed by the chunk
 * that carried them; not streamed (`stream` false), the first and last instants are both the answer's arrival.
 */
export async function streamGenerate(
  baseUrl: string,
  clock: Clock,
  inputIds: number[],
  maxNewTokens: number,
  timeoutMs: number,
  stream = true,
  onFirstEvent?: () => void,
  /** When given, the client instant of every event is appended (the scheduling probe reads running streams' gaps). */
  eventTimesMs?: number[],
): Promise<StreamResult> {
  const sentMs = clock.nowMs();
  const response = await request(`${baseUrl}/generate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      input_ids: inputIds,
      sampling_params: { max_new_tokens: maxNewTokens, ignore_eos: true, temperature: 0 },
      stream,
    }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (response.statusCode < 200 || response.statusCode >= 300) {
    throw new ServelabError('PROTOCOL_ERROR', `calibration request failed with HTTP ${response.statusCode}: ${await response.body.text()}`);
  }
  if (!stream) {
    const body = (await response.body.json()) as Record<string, unknown>;
    const doneMs = clock.nowMs();
    const meta = (body['meta_info'] ?? {}) as Record<string, unknown>;
    const completionTokens = typeof meta['completion_tokens'] === 'number' ? meta['completion_tokens'] : maxNewTokens;
    return { sentMs, firstEventMs: doneMs, lastEventMs: doneMs, completionTokens, meta };
  }
  let firstEventMs = Number.NaN;
  let lastEventMs = Number.NaN;
  let meta: Record<string, unknown> = {};
  // The time of the chunk that carried an event: every event in one chunk arrived together.
  let chunkMs = Number.NaN;
  const parser = new SseParser((data) => {
    if (data === '[DONE]') return;
    const parsed = JSON.parse(data) as Record<string, unknown>;
    if ('error' in parsed) throw new ServelabError('PROTOCOL_ERROR', `calibration request failed: ${JSON.stringify(parsed['error'])}`);
    if (Number.isNaN(firstEventMs)) {
      firstEventMs = chunkMs;
      onFirstEvent?.();
    }
    lastEventMs = chunkMs;
    eventTimesMs?.push(chunkMs);
    meta = (parsed['meta_info'] ?? {}) as Record<string, unknown>;
  });
  for await (const chunk of response.body) {
    chunkMs = clock.nowMs();
    if (!parser.push(chunk as Buffer)) {
      response.body.destroy();
      throw new ServelabError('PROTOCOL_ERROR', `calibration request failed: one event of the stream from ${baseUrl} exceeds ${DEFAULT_MAX_SSE_EVENT_BYTES} bytes`);
    }
  }
  parser.end();
  const completionTokens = typeof meta['completion_tokens'] === 'number' ? meta['completion_tokens'] : maxNewTokens;
  return { sentMs, firstEventMs, lastEventMs, completionTokens, meta };
}
