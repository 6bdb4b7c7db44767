/**
 * requests.parquet on the parquet reporter's path (pack the records into columns, then encode), with servelab's own
 * encoder against a maintained library, hyparquet-writer, in its uncompressed mode (servelab writes uncompressed
 * pages): CPU time, the least of several rounds, for 10,000 and 100,000 records by default. docs/CONTRIBUTING.md
 * asks for a maintained library unless it costs more than twice the CPU on this path.
 * Run: npm run build && node dist/bench/parquet-encoders.js [records...]
 * The library is given what servelab's encoder writes: optional columns, UTF-8 strings, plain pages for instants,
 * statistics, no page index; its input needs JavaScript arrays with null for absent values, which is counted.
 */
import { parquetReadObjects } from 'hyparquet';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import { ABSENT_BOOLEAN, type PackedColumn, type PackedParquet } from '../src/report/parquet/packed-columns.js';
import { encodePackedParquet, packRequestColumns } from '../src/report/parquet/parquet-columns.js';
import type { RunData } from '../src/types/run.js';
import { syntheticRun } from './synthetic-run.js';

const ROUNDS = 5;
/** The ratio above which the library is not taken. */
const MAX_RATIO = 2;

function cpuMilliseconds(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e3;
}

/** A packed column as the library takes it: an array with null where a value is absent. */
function withNulls(column: PackedColumn, type: string): (number | boolean | string | null)[] {
  if (Array.isArray(column)) return column;
  const values = new Array<number | boolean | null>(column.length);
  if (type === 'BOOLEAN') {
    for (let index = 0; index < column.length; index++) values[index] = column[index] === ABSENT_BOOLEAN ? null : column[index] === 1;
  } else {
    for (let index = 0; index < column.length; index++) {
      const value = column[index] as number;
      values[index] = Number.isNaN(value) ? null : value;
    }
  }
  return values;
}

function encodeWithLibrary(packed: PackedParquet): ArrayBuffer {
  const writer = new ByteWriter();
  const schema = [
    { name: 'root', num_children: packed.columns.length },
    ...packed.columns.map((column) => ({
      name: column.name,
      repetition_type: 'OPTIONAL' as const,
      ...(column.type === 'STRING' ? { type: 'BYTE_ARRAY' as const, converted_type: 'UTF8' as const } : { type: column.type }),
    })),
  ];
  const parquet = new ParquetWriter({ writer, schema, codec: 'UNCOMPRESSED' });
  for (const rowGroup of packed.rowGroups) {
    const columnData = rowGroup.map((column, index) => {
      const header = packed.columns[index] as PackedParquet['columns'][number];
      return { name: header.name, data: withNulls(column, header.type), offsetIndex: false, ...(header.mostlyDistinct === true ? { encoding: 'PLAIN' as const } : {}) };
    });
    parquet.write({ columnData, rowGroupSize: packed.rowGroupRows });
  }
  parquet.finish();
  return writer.getBuffer();
}

function leastCpu(work: () => unknown): number {
  let least = Number.POSITIVE_INFINITY;
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.cpuUsage();
    work();
    least = Math.min(least, cpuMilliseconds(start));
  }
  return least;
}

async function sameRows(run: RunData): Promise<boolean> {
  const own = encodePackedParquet(packRequestColumns(run.records, run.info.startTime));
  const library = encodeWithLibrary(packRequestColumns(run.records, run.info.startTime));
  const ownRows = await parquetReadObjects({ file: own.buffer.slice(own.byteOffset, own.byteOffset + own.byteLength) as ArrayBuffer });
  const libraryRows = await parquetReadObjects({ file: library });
  return JSON.stringify(ownRows) === JSON.stringify(libraryRows);
}

async function main(): Promise<void> {
  const counts = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [10_000, 100_000];
  for (const count of counts) {
    const run = syntheticRun(count, 16);
    const t0 = run.info.startTime;
    let ownBytes = 0;
    let libraryBytes = 0;
    const own = leastCpu(() => (ownBytes = encodePackedParquet(packRequestColumns(run.records, t0)).byteLength));
    const library = leastCpu(() => (libraryBytes = encodeWithLibrary(packRequestColumns(run.records, t0)).byteLength));
    const ratio = library / own;
    console.log(`${count} records, requests.parquet packed and encoded (least CPU of ${ROUNDS}):`);
    console.log(`  servelab's encoder (baseline)          ${own.toFixed(1).padStart(8)} ms CPU  ${(ownBytes / 1e6).toFixed(1)} MB`);
    console.log(`  hyparquet-writer, uncompressed         ${library.toFixed(1).padStart(8)} ms CPU  ${(libraryBytes / 1e6).toFixed(1)} MB  ${ratio.toFixed(2)}× (library taken below ${MAX_RATIO}×: ${ratio <= MAX_RATIO ? 'yes' : 'no'})`);
    console.log(`  the same rows read back from both (hyparquet): ${(await sameRows(run)) ? 'yes' : 'NO'}`);
  }
}

await main();
