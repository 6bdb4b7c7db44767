/** What the parquet worker sends back: the file's bytes, or why it could not encode them. */
export type FromParquetWorkerMessage = { type: 'bytes'; bytes: Uint8Array } | { type: 'error'; message: string };
