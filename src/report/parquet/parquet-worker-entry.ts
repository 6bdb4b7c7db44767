/**
 * The parquet worker thread: encodes requests.parquet from packed row groups as they arrive, while the main thread
 * packs the next ones and then writes the other files, and sends the bytes back (moved, not copied). The main thread
 * writes the file, so that a full disk is reported as for every other file.
 */
import { parentPort } from 'node:worker_threads';
import { ParquetEncoder } from './parquet-encoder.js';
import type { FromParquetWorkerMessage, ToParquetWorkerMessage } from './parquet-worker-messages.js';

const port = parentPort;
if (port !== null) {
  let encoder: ParquetEncoder | undefined;
  let failed = false;
  const fail = (error: unknown): void => {
    failed = true;
    const message: FromParquetWorkerMessage = { type: 'error', message: error instanceof Error ? error.message : String(error) };
    port.postMessage(message);
  };
  port.on('message', (message: ToParquetWorkerMessage) => {
    if (failed) return;
    try {
      if (message.type === 'header') encoder = new ParquetEncoder(message.header);
      else if (encoder === undefined) throw new Error(`a "${message.type}" message came before the header`);
      else if (message.type === 'rowGroup') {
        encoder.add(message.rowGroup);
        const reply: FromParquetWorkerMessage = { type: 'rowGroupEncoded' };
        port.postMessage(reply);
      }
      else {
        const bytes = encoder.finish();
        const reply: FromParquetWorkerMessage = { type: 'bytes', bytes };
        port.postMessage(reply, [bytes.buffer as ArrayBuffer]);
      }
    } catch (error) {
      fail(error);
    }
  });
}
