import type { Clock } from '../clock/clock.js';
import type { ProtocolClient } from '../types/client.js';
import type { RequestRecord } from '../types/record.js';
import type { WorkloadRequest } from '../types/workload.js';
import { runLoad } from './run-load.js';

export interface WarmupOnlyOptions {
  warmupRequests: WorkloadRequest[];
  warmupTimeoutMs?: number;
  client: ProtocolClient;
  clock: Clock;
  signal: AbortSignal;
  requestIdPrefix: string;
  maxConcurrency?: number;
}

/**
 * Warmup requests alone, all at once (at most `maxConcurrency`), through `runLoad` with no measured requests: what a
 * run whose measured load is sent elsewhere (worker threads, load-generator processes) sends from its own thread first.
 */
export async function runWarmupOnly(options: WarmupOnlyOptions): Promise<RequestRecord[]> {
  if (options.warmupRequests.length === 0) return [];
  const result = await runLoad({
    requests: [],
    warmupRequests: options.warmupRequests,
    warmupTimeoutMs: options.warmupTimeoutMs,
    arrivalOffsetsMs: new Float64Array(0),
    // A closed loop with nothing to send: an open loop would start a timer thread for no instants.
    mode: { kind: 'closed', concurrency: 1 },
    client: options.client,
    clock: options.clock,
    signal: options.signal,
    requestIdPrefix: options.requestIdPrefix,
    ...(options.maxConcurrency === undefined ? {} : { maxConcurrency: options.maxConcurrency }),
  });
  return result.warmupRecords;
}
