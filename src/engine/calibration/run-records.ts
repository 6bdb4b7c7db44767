import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServelabError } from '../../errors/servelab-error.js';
import { resolveEngineSetup } from '../create-engine.js';

/**
 * What `calibrate --from-runs` reads from a run directory: each successful request's server timing, as servelab
 * recorded it in requests.jsonl (the server's own stamps: `queue_time_start`, `queue_time_end` = forward entry,
 * `server_first_token_time`, `server_finish_time`, seconds after the run's t0), and the server limits the run's
 * config.json names, where it names them (runs on `--target sim`; an attached server's limits are not in the run).
 */

/** One request as the server timed it; times in ms after the run's t0. */
export interface RunRequest {
  /** Entered the server's scheduler queue. */
  queuedMs: number;
  /** Left the queue into its first forward pass. */
  forwardMs: number;
  firstTokenMs: number;
  finishedMs: number;
  promptTokens: number;
  /** Prompt tokens the server found in its prefix cache (computed by no step). */
  cachedTokens: number;
  outputTokens: number;
  /** The serving path around the engine, where the record has its instants (ms). */
  ingressMs?: number;
  deliveryMs?: number;
  networkMs?: number;
}

export interface RunLimits {
  maxRunningRequests?: number;
  chunkedPrefillSize?: number;
  maxTotalTokens?: number;
  enableMixedChunk?: boolean;
  /** KV tokens per page (`--page-size`), where the run's config.json set it or the simulated engine's came from. */
  pageSize?: number;
}

export interface RecordedRun {
  directory: string;
  requests: RunRequest[];
  /** Requests the run recorded that are not used: failed, or without the server stamps above. */
  skipped: number;
  /** The run's target (`sim`, `sglang`, `attach`) and the limits its config.json set. */
  target: string;
  limits: RunLimits;
  /** Set when only the first requests are used (a long run fitted on a stretch of it): how many the run had. */
  truncatedFrom?: number;
}

type JsonRecord = Record<string, unknown>;

const number = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

/** Reads a run directory servelab wrote (node test; a routing test's records mix servers and are refused). */
export function readRecordedRun(directory: string): RecordedRun {
  const refuse = (why: string): never => {
    throw new ServelabError(
      'INVALID_CONFIG',
      `${directory} is not a run calibrate --from-runs can fit from (${why}); give the directories servelab node wrote (results/<run-id>), with server timing (SGLang with --enable-metrics, or --server-request-log-dir)`,
    );
  };
  let config: JsonRecord = {};
  try {
    config = JSON.parse(readFileSync(join(directory, 'config.json'), 'utf8')) as JsonRecord;
  } catch (error) {
    refuse((error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no config.json' : `config.json: ${(error as Error).message}`);
  }
  if (config['test'] === 'routing') refuse('a routing test: its requests were served by several servers');
  let text = '';
  try {
    text = readFileSync(join(directory, 'requests.jsonl'), 'utf8');
  } catch (error) {
    refuse((error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no requests.jsonl' : `requests.jsonl: ${(error as Error).message}`);
  }
  const requests: RunRequest[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const record = JSON.parse(line) as JsonRecord;
    const request = requestOf(record);
    if (request === undefined) skipped++;
    else requests.push(request);
  }
  if (requests.length === 0) refuse(`none of its ${skipped} requests succeeded with the server's queue, first-token and finish stamps`);
  requests.sort((left, right) => left.queuedMs - right.queuedMs);
  const limits: RunLimits = {};
  const positive = (key: string): number | undefined => {
    const value = number(config[key]);
    return value !== undefined && value > 0 ? value : undefined;
  };
  const running = positive('maxRunningRequests');
  const chunk = positive('chunkedPrefillSize');
  const total = positive('maxTotalTokens');
  const page = positive('pageSize');
  if (page !== undefined && Number.isInteger(page)) limits.pageSize = page;
  if (running !== undefined) limits.maxRunningRequests = running;
  if (chunk !== undefined) limits.chunkedPrefillSize = chunk;
  if (total !== undefined) limits.maxTotalTokens = total;
  if (typeof config['enableMixedChunk'] === 'boolean') limits.enableMixedChunk = config['enableMixedChunk'];
  // A run on the simulated engine that left a limit (or the mixed-chunk setting) out used its own profile's value or
  // the engine's default (src/engine/create-engine.ts).
  if (
    config['target'] === 'sim' &&
    (running === undefined || chunk === undefined || total === undefined || limits.enableMixedChunk === undefined || limits.pageSize === undefined)
  ) {
    const profile = typeof config['profile'] === 'string' ? config['profile'] : undefined;
    const engine = resolveEngineSetup(profile === undefined ? {} : { profile }).config;
    limits.maxRunningRequests ??= engine.maxRunningRequests;
    limits.chunkedPrefillSize ??= engine.chunkedPrefillSize;
    limits.maxTotalTokens ??= engine.maxTotalTokens;
    limits.enableMixedChunk ??= engine.enableMixedChunk;
    limits.pageSize ??= engine.pageSize;
  }
  return { directory, requests, skipped, target: typeof config['target'] === 'string' ? config['target'] : 'unknown', limits };
}

function requestOf(record: JsonRecord): RunRequest | undefined {
  if (record['success'] !== true) return undefined;
  const queued = number(record['queue_time_start']);
  const forward = number(record['queue_time_end']);
  const first = number(record['server_first_token_time']);
  // Where the server stamped no finish (virtual-time runs, servers without request_finished_ts), the client's last token
  // less the first token's delivery stands in: the path back to the client takes about as long for every token.
  const clientFirst = number(record['first_token_time']);
  const clientFinish = number(record['finish_time']);
  const finished =
    number(record['server_finish_time']) ??
    (clientFinish !== undefined && clientFirst !== undefined && first !== undefined ? clientFinish - (clientFirst - first) : undefined);
  const prompt = number(record['actual_prompt_tokens']) ?? number(record['input_length']);
  const output = number(record['actual_output_tokens']);
  if (queued === undefined || forward === undefined || first === undefined || finished === undefined || prompt === undefined || output === undefined) return undefined;
  if (!(queued <= forward && forward <= first && first <= finished) || output < 1) return undefined;
  const request: RunRequest = {
    queuedMs: queued * 1000,
    forwardMs: forward * 1000,
    firstTokenMs: first * 1000,
    finishedMs: finished * 1000,
    promptTokens: prompt,
    cachedTokens: number(record['cached_tokens']) ?? 0,
    outputTokens: output,
  };
  const created = number(record['server_created_time']);
  const arrival = number(record['arrival_time']);
  if (created !== undefined) request.ingressMs = (queued - created) * 1000;
  if (clientFirst !== undefined) request.deliveryMs = (clientFirst - first) * 1000;
  if (created !== undefined && arrival !== undefined) request.networkMs = (created - arrival) * 1000;
  return request;
}
