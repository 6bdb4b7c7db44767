import { systemClock } from '../../../src/clock/clock.js';
import { startSimServer } from '../../../src/engine/index.js';
import type { RunningSimServer } from '../../../src/engine/index.js';
import type { ProtocolClientSpec, RunLoadOptions } from '../../../src/types/load.js';
import type { RequestRecord } from '../../../src/types/record.js';
import type { WorkloadRequest } from '../../../src/types/workload.js';

/**
 * What the tests of the multi-worker and load-generator paths share (test/load/multi-worker/,
 * test/load/generator-process/): the server they load, the workload and the options every run starts from, and the
 * fields that differ between two runs of the same workload.
 */

/** Fields a run measures; everything else in a record is decided by the workload and the schedule. */
const MEASURED_FIELDS = [
  'arrivalTime', 'firstTokenTime', 'finishTime', 'serverCreatedTime', 'queueTimeStart', 'queueTimeEnd', 'serverFirstTokenTime',
  'serverDispatchTime', 'serverResponseSentTime', 'serverFinishTime', 'prefillWaitingLatency', 'prefillLaunchLatency',
  'decodeThroughputTokensPerSecond', 'interTokenLatencies', 'dispatchTime', 'scheduledTime',
] as const;

/** A record without what its run measured: equal for two runs of the same workload and schedule. */
export function withoutMeasuredTimes(record: RequestRecord): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...record };
  for (const field of MEASURED_FIELDS) delete copy[field];
  return copy;
}

/** `count` short prompts of 4-8 words in three prefix groups, each asking for `outputLength(index)` tokens. */
export function wordWorkload(count: number, outputLength: (index: number) => number = (index) => 2 + (index % 3)): WorkloadRequest[] {
  return Array.from({ length: count }, (_, index) => ({
    datasetIndex: index,
    prompt: Array.from({ length: 4 + (index % 5) }, (_, word) => `word${word}`).join(' '),
    inputLength: 4 + (index % 5),
    outputLength: outputLength(index),
    prefixGroup: index % 3,
  }));
}

export interface LoadTarget {
  server: RunningSimServer;
  /** Streaming SGLang requests to `server`, greedy and ignoring EOS so each gives exactly its output length. */
  clientSpec: ProtocolClientSpec;
}

/** A fast sim server (1 ms steps, room for 256 requests at once) and the client spec for it. */
export async function startLoadTarget(): Promise<LoadTarget> {
  // The radix cache is off so that a second run of the same prompts reports the same cached-token counts.
  const server = await startSimServer({ profile: { kind: 'simple', stepMs: 1 }, disableRadixCache: true, maxRunningRequests: 256 });
  return { server, clientSpec: { protocol: 'sglang', options: { baseUrl: server.url, stream: true, sampling: { temperature: 0, ignoreEos: true } } } };
}

/**
 * The options every run of these tests starts from: `requests` at `arrivalOffsetsMs` through `clientSpec`, no warmup,
 * on the system clock (a real epoch clock: the generators' clocks are measured against it).
 */
export function loadOptions(
  clientSpec: ProtocolClientSpec,
  requests: WorkloadRequest[],
  arrivalOffsetsMs: Float64Array,
): Pick<RunLoadOptions, 'requests' | 'warmupRequests' | 'arrivalOffsetsMs' | 'clock'> & { clientSpec: ProtocolClientSpec } {
  return { clientSpec, requests, warmupRequests: [], arrivalOffsetsMs, clock: systemClock };
}
