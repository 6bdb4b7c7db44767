import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { encodePackedParquet, rowGroupTransferList, type PackedParquet } from './parquet-columns.js';
import type { FromParquetWorkerMessage, ToParquetWorkerMessage } from './parquet-worker-messages.js';

/**
 * The parquet worker's entry script. From the built package it is this file's sibling; when servelab runs from its
 * TypeScript sources (under the test runner) a worker thread cannot load `.ts`, so it is the built copy in `dist/`;
 * null when neither exists.
 */
export function parquetWorkerScriptPath(): string | null {
  const sibling = fileURLToPath(new URL('./parquet-worker-entry.js', import.meta.url));
  if (existsSync(sibling)) return sibling;
  const built = fileURLToPath(new URL('../../../dist/src/report/parquet/parquet-worker-entry.js', import.meta.url));
  return existsSync(built) ? built : null;
}

/**
 * requests.parquet's bytes, encoded on a worker thread so that the main thread can write the other files meanwhile
 * (encoding is most of the file's cost). Each row group is posted as soon as it is packed, so that the worker encodes
 * one while this thread packs the next; its columns are moved there, not copied (unusable here after). Without
 * a worker script (null: sources not built) it encodes on this thread: the same bytes, later.
 */
export function encodeParquetInWorker(packed: PackedParquet, scriptPath: string | null = parquetWorkerScriptPath()): Promise<Uint8Array> {
  if (scriptPath === null) return Promise.resolve().then(() => encodePackedParquet(packed));
  return new Promise<Uint8Array>((resolve, reject) => {
    const worker = new Worker(scriptPath);
    let settled = false;
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      outcome();
      void worker.terminate();
    };
    worker.on('message', (message: FromParquetWorkerMessage) => {
      if (message.type === 'bytes') settle(() => resolve(message.bytes));
      else settle(() => reject(new Error(`the parquet worker failed: ${message.message}`)));
    });
    worker.on('error', (error) => settle(() => reject(new Error(`the parquet worker crashed: ${error.message}`, { cause: error }))));
    worker.on('exit', (code) => settle(() => reject(new Error(`the parquet worker stopped (exit code ${code}) before it sent the file`))));
    const post = (message: ToParquetWorkerMessage, transfer: ArrayBuffer[] = []): void => worker.postMessage(message, transfer);
    try {
      post({ type: 'header', header: { t0: packed.t0, columns: packed.columns, rowGroupRows: packed.rowGroupRows } });
      for (const rowGroup of packed.rowGroups) post({ type: 'rowGroup', rowGroup }, rowGroupTransferList(rowGroup));
      post({ type: 'end' });
    } catch (error) {
      settle(() => reject(error));
    }
  });
}
