import { Worker } from 'node:worker_threads';
import { workerScript } from '../../utils/worker-script.js';
import type { PackedParquet } from './packed-columns.js';
import { encodePackedParquet, rowGroupTransferList } from './parquet-columns.js';
import type { FromParquetWorkerMessage, ToParquetWorkerMessage } from './parquet-worker-messages.js';

/**
 * Row groups posted to the worker and not yet encoded there, at most: packing waits beyond that, so that a
 * million-record run does not hold every packed row group (hundreds of MB) while the worker catches up.
 */
export const PARQUET_ROW_GROUPS_IN_FLIGHT = 2;

/**
 * The parquet worker's entry script. From the built package it is this file's sibling; when servelab runs from its
 * TypeScript sources (under the test runner) a worker thread cannot load `.ts`, so it is the built copy in `dist/`;
 * null when neither exists.
 */
export function parquetWorkerScriptPath(): string | null {
  return workerScript(import.meta.url, 'parquet-worker-entry.js').path;
}

/**
 * requests.parquet's bytes, encoded on a worker thread so that the main thread can write the other files meanwhile
 * (encoding is most of the file's cost). Each row group is packed and posted while the worker encodes the one before,
 * at most PARQUET_ROW_GROUPS_IN_FLIGHT ahead (waiting for the worker lets the other reporters run); its columns are
 * moved there, not copied (unusable here after). Without a worker script (null: sources not built) it encodes on this
 * thread: the same bytes, later.
 */
export async function encodeParquetInWorker(packed: PackedParquet, scriptPath: string | null = parquetWorkerScriptPath()): Promise<Uint8Array> {
  if (scriptPath === null) return encodePackedParquet(packed);
  const worker = new Worker(scriptPath);
  let encodedCount = 0;
  let wakePacker: (() => void) | undefined;
  let failure: Error | undefined;
  let resolveBytes!: (bytes: Uint8Array) => void;
  let rejectBytes!: (error: Error) => void;
  const bytes = new Promise<Uint8Array>((resolve, reject) => {
    resolveBytes = resolve;
    rejectBytes = reject;
  });
  bytes.catch(() => undefined);
  const fail = (error: Error): void => {
    failure ??= error;
    rejectBytes(failure);
    wakePacker?.();
  };
  worker.on('message', (message: FromParquetWorkerMessage) => {
    if (message.type === 'rowGroupEncoded') {
      encodedCount++;
      wakePacker?.();
    } else if (message.type === 'bytes') resolveBytes(message.bytes);
    else fail(new Error(`the parquet worker failed: ${message.message}`));
  });
  worker.on('error', (error) => fail(new Error(`the parquet worker crashed: ${error.message}`, { cause: error })));
  worker.on('exit', (code) => fail(new Error(`the parquet worker stopped (exit code ${code}) before it sent the file`)));
  const post = (message: ToParquetWorkerMessage, transfer: ArrayBuffer[] = []): void => worker.postMessage(message, transfer);
  try {
    post({ type: 'header', header: { t0: packed.t0, columns: packed.columns, rowGroupRows: packed.rowGroupRows } });
    let postedCount = 0;
    for (const rowGroup of packed.rowGroups) {
      post({ type: 'rowGroup', rowGroup }, rowGroupTransferList(rowGroup));
      postedCount++;
      while (failure === undefined && postedCount - encodedCount >= PARQUET_ROW_GROUPS_IN_FLIGHT) {
        await new Promise<void>((resolve) => (wakePacker = resolve));
        wakePacker = undefined;
      }
      if (failure !== undefined) break;
    }
    if (failure === undefined) post({ type: 'end' });
    return await bytes;
  } finally {
    await worker.terminate();
  }
}
