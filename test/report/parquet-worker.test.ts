import { parquetReadObjects } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { PARQUET_ROW_GROUPS_IN_FLIGHT, encodeParquetInWorker, parquetWorkerScriptPath } from '../../src/report/parquet/encode-in-worker.js';
import type { PackedColumn } from '../../src/report/parquet/packed-columns.js';
import { encodePackedParquet, packRequestColumns } from '../../src/report/parquet/parquet-columns.js';
import { requestsParquetBytes } from '../../src/report/parquet/parquet-reporter.js';
import { T0, fullyTracedRecord, recordAt } from '../analysis/records.js';
import { sampleRoutingRun } from './sample-run.js';

function arrayBufferOf(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

/** Records with absent times, counts, booleans and strings, so that every packed form's "absent" is exercised. */
function records() {
  const run = sampleRoutingRun(25);
  run.records.push(
    recordAt({ scheduledTime: 3, success: false, error: 'server_error', host: '', heldForConcurrency: false }),
    fullyTracedRecord(3.5, { heldForConcurrency: true, finishReason: 'length', retries: 2 }),
  );
  return run.records;
}

describe('the parquet worker', () => {
  it('is found (npm test builds it first)', () => {
    expect(parquetWorkerScriptPath()).toMatch(/parquet-worker-entry\.js$/);
  });

  it('encodes the same bytes as encoding on the main thread, moving the packed columns to the worker', async () => {
    const run = records();
    const inline = requestsParquetBytes(run, T0, 10);
    const packed = packRequestColumns(run, T0, 10);
    const rowGroups = [...packed.rowGroups];
    expect(rowGroups.length).toBe(3);
    const fromWorker = await encodeParquetInWorker({ ...packed, rowGroups });
    expect(Buffer.from(fromWorker).equals(Buffer.from(inline))).toBe(true);
    // Moved, not copied: the numeric columns left this thread.
    expect((rowGroups[0]?.find((column) => column instanceof Float64Array) as Float64Array).length).toBe(0);
    const rows = await parquetReadObjects({ file: arrayBufferOf(fromWorker) });
    expect(rows.length).toBe(27);
    expect(rows[25]?.host).toBeNull();
    expect(rows[25]?.success).toBe(false);
    expect(rows[25]?.first_token_time).toBeNull();
    expect(rows[26]?.held_for_concurrency).toBe(true);
  });

  it('packs a row group only when the worker is fewer than PARQUET_ROW_GROUPS_IN_FLIGHT behind, and all of them in the end', async () => {
    const run = records();
    const packed = packRequestColumns(run, T0, 5);
    let packedCount = 0;
    function* counted(): Generator<PackedColumn[]> {
      for (const rowGroup of packed.rowGroups) {
        packedCount++;
        yield rowGroup;
      }
    }
    const encoding = encodeParquetInWorker({ ...packed, rowGroups: counted() });
    // Before the worker answered anything, only the first row groups were packed.
    expect(packedCount).toBe(PARQUET_ROW_GROUPS_IN_FLIGHT);
    const bytes = await encoding;
    expect(packedCount).toBe(6);
    expect(Buffer.from(bytes).equals(Buffer.from(requestsParquetBytes(run, T0, 5)))).toBe(true);
  });

  it('encodes on this thread, with the same bytes, when there is no worker script', async () => {
    const run = records();
    const bytes = await encodeParquetInWorker(packRequestColumns(run, T0, 10), null);
    expect(Buffer.from(bytes).equals(Buffer.from(encodePackedParquet(packRequestColumns(run, T0, 10))))).toBe(true);
  });

  it('rejects, naming the worker, when encoding fails there', async () => {
    const packed = packRequestColumns(records(), T0, 10);
    // A schema column with no packed column in the row groups.
    packed.columns.push({ name: 'extra', type: 'DOUBLE' });
    await expect(encodeParquetInWorker(packed)).rejects.toThrow(/^the parquet worker failed: a parquet row group has \d+ columns, the schema \d+$/);
  });
});
