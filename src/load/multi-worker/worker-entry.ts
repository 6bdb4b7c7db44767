/**
 * One load worker thread: builds its own protocol client, reports ready, and on `start` offers its share of the
 * workload through its own pacer (`runLoad`) from the shared start instant. Progress and the result go back to the
 * main thread as messages; an abort message interrupts the run as a signal would.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { systemClock } from '../../clock/clock.js';
import { loadProtocolClient } from '../../clients/registry.js';
import { isServelabError } from '../../errors/servelab-error.js';
import type { ProtocolClient } from '../../types/client.js';
import type { RequestRecord } from '../../types/record.js';
import { runLoad } from '../run-load.js';
import type { FromLoadWorkerMessage, LoadWorkerData, ToLoadWorkerMessage } from './worker-messages.js';

function post(port: MessagePort, message: FromLoadWorkerMessage): void {
  port.postMessage(message);
}

function postError(port: MessagePort, error: unknown): void {
  post(port, {
    type: 'error',
    message: error instanceof Error ? error.message : String(error),
    ...(isServelabError(error) ? { code: error.code } : {}),
  });
}

/** How often finished records go back to the main thread, when it asked for them. */
const RECORD_BATCH_INTERVAL_MS = 100;

async function offerShare(port: MessagePort, data: LoadWorkerData, client: ProtocolClient, startAtEpochMs: number, signal: AbortSignal): Promise<void> {
  let batch: RequestRecord[] = [];
  const sendBatch = (): void => {
    if (batch.length === 0) return;
    post(port, { type: 'records', records: batch });
    batch = [];
  };
  const batchTimer = data.streamRecords === true ? setInterval(sendBatch, RECORD_BATCH_INTERVAL_MS) : undefined;
  try {
    const result = await runLoad({
      requests: data.requests,
      warmupRequests: [],
      arrivalOffsetsMs: data.arrivalOffsetsMs,
      requestIndices: data.requestIndices,
      maxConcurrency: data.maxConcurrency,
      client,
      // This thread's own clock: its monotonic scale has its own origin, which is why the start instant is on the epoch.
      clock: systemClock,
      signal,
      requestIdPrefix: data.requestIdPrefix,
      startAtEpochMs,
      onProgress: (progress) => post(port, { type: 'progress', progress }),
      ...(data.streamRecords === true ? { onRecord: (record: RequestRecord) => void batch.push(record) } : {}),
    });
    if (batchTimer !== undefined) clearInterval(batchTimer);
    sendBatch();
    await client.close().catch(() => undefined);
    post(port, { type: 'result', result });
  } catch (error) {
    if (batchTimer !== undefined) clearInterval(batchTimer);
    sendBatch();
    await client.close().catch(() => undefined);
    postError(port, error);
  }
}

async function main(port: MessagePort, data: LoadWorkerData): Promise<void> {
  const abortController = new AbortController();
  let client: ProtocolClient | undefined;
  let pendingStart: number | undefined;
  port.on('message', (message: ToLoadWorkerMessage) => {
    if (message.type === 'abort') abortController.abort();
    else if (client === undefined) pendingStart = message.startAtEpochMs;
    else void offerShare(port, data, client, message.startAtEpochMs, abortController.signal);
  });
  try {
    client = await loadProtocolClient(data.clientSpec.protocol, { ...data.clientSpec.options, clock: systemClock });
  } catch (error) {
    postError(port, error);
    return;
  }
  post(port, { type: 'ready' });
  // The main thread waits for `ready` before it sends `start`; kept for safety should that ever change.
  if (pendingStart !== undefined) void offerShare(port, data, client, pendingStart, abortController.signal);
}

if (parentPort !== null) await main(parentPort, workerData as LoadWorkerData);
