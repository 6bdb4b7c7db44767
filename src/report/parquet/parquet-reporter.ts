import { join } from 'node:path';
import type { RequestRecord } from '../../types/record.js';
import type { ReportContext, Reporter } from '../../types/reporter.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import { encodeParquetInWorker } from './encode-in-worker.js';
import { PARQUET_ROW_GROUP_ROWS, encodePackedParquet, packRequestColumns } from './parquet-columns.js';

export const REQUESTS_PARQUET = 'requests.parquet';

/**
 * The bytes of requests.parquet: the requests.csv rows (warmups left out), in row groups of `rowGroupRows`
 * (PARQUET_ROW_GROUP_ROWS by default), encoded on this thread, as the reporter does for a run of one row group.
 */
export function requestsParquetBytes(records: readonly RequestRecord[], t0: number, rowGroupRows = PARQUET_ROW_GROUP_ROWS): Uint8Array {
  return encodePackedParquet(packRequestColumns(records, t0, rowGroupRows));
}

/**
 * `requests.parquet`: the columns of requests.csv with types (float64 seconds after t0, int32 counts, booleans, UTF-8
 * strings, nulls where a value is absent), for `pandas.read_parquet` on runs too large to parse as text. The columns
 * are read from the records here. A run of more than one row group is encoded on a worker thread, beside the reporters
 * that follow; a smaller one here: the worker costs about 80 ms of CPU to start (an isolate, its modules, its code
 * compiled afresh), more than encoding 100,000 rows takes once the encoder runs warm.
 */
export const parquetReporter: Reporter = {
  name: 'parquet',
  concurrent: true,
  async write(context: ReportContext): Promise<string[]> {
    const path = join(context.outputDirectory, REQUESTS_PARQUET);
    const records = context.run.records;
    const packed = packRequestColumns(records, context.run.info.startTime);
    await writeFileAtomic(path, records.length > PARQUET_ROW_GROUP_ROWS ? await encodeParquetInWorker(packed) : encodePackedParquet(packed));
    return [path];
  },
};
