import type { PackedColumn, ParquetHeader } from './packed-columns.js';

/** What the main thread sends the parquet worker, in this order: the header, each row group, then the end. */
export type ToParquetWorkerMessage = { type: 'header'; header: ParquetHeader } | { type: 'rowGroup'; rowGroup: PackedColumn[] } | { type: 'end' };

/** What the parquet worker sends back: that it encoded a row group, the file's bytes, or why it could not encode them. */
export type FromParquetWorkerMessage = { type: 'rowGroupEncoded' } | { type: 'bytes'; bytes: Uint8Array } | { type: 'error'; message: string };
