/**
 * The parquet worker thread: encodes requests.parquet from packed columns while the main thread writes the other
 * files, and sends the bytes back (moved, not copied). The main thread writes the file, so that a full disk is
 * reported as for every other file.
 */
import { parentPort } from 'node:worker_threads';
import { encodePackedParquet, type PackedParquet } from './parquet-columns.js';
import type { FromParquetWorkerMessage } from './parquet-worker-messages.js';

const port = parentPort;
if (port !== null) {
  port.once('message', (packed: PackedParquet) => {
    let message: FromParquetWorkerMessage;
    let transfer: ArrayBuffer[] = [];
    try {
      const bytes = encodePackedParquet(packed);
      message = { type: 'bytes', bytes };
      transfer = [bytes.buffer as ArrayBuffer];
    } catch (error) {
      message = { type: 'error', message: error instanceof Error ? error.message : String(error) };
    }
    port.postMessage(message, transfer);
  });
}
