import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { ABSENT_BOOLEAN, type PackedColumn, type ParquetHeader } from '../../src/report/parquet/packed-columns.js';
import { ParquetEncoder } from '../../src/report/parquet/parquet-encoder.js';

// Files written by servelab's own encoder, read back by an independent reader (hyparquet), value for value.

function arrayBufferOf(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

type Cell = number | string | boolean | null;

/** A packed column from plain cells (null for absent), as the reporter packs them. */
function packed(type: ParquetHeader['columns'][number]['type'], cells: readonly Cell[]): PackedColumn {
  if (type === 'STRING') return cells.map((cell) => (cell === null ? null : String(cell)));
  if (type === 'BOOLEAN') return Uint8Array.from(cells, (cell) => (cell === null ? ABSENT_BOOLEAN : cell === true ? 1 : 0));
  return Float64Array.from(cells, (cell) => (cell === null ? Number.NaN : (cell as number)));
}

async function roundTrip(columns: ParquetHeader['columns'], rowGroups: Cell[][][]): Promise<{ rows: Record<string, unknown>[]; file: ArrayBuffer }> {
  const encoder = new ParquetEncoder({ t0: 1700000000.25, columns, rowGroupRows: 1000 });
  for (const group of rowGroups) encoder.add(group.map((cells, position) => packed((columns[position] as { type: ParquetHeader['columns'][number]['type'] }).type, cells)));
  const file = arrayBufferOf(encoder.finish());
  return { rows: (await parquetReadObjects({ file })) as Record<string, unknown>[], file };
}

/** Deterministic pseudo-random integers in [0, range). */
function randomInts(count: number, range: number, seed: number): number[] {
  let state = seed;
  return Array.from({ length: count }, () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % range;
  });
}

describe('the requests.parquet encoder', () => {
  it('reads back every value and null of each type, across row groups, with the schema and t0', async () => {
    const columns: ParquetHeader['columns'] = [
      { name: 'time', type: 'DOUBLE', mostlyDistinct: true },
      { name: 'duration', type: 'DOUBLE' },
      { name: 'count', type: 'INT32' },
      { name: 'flag', type: 'BOOLEAN' },
      { name: 'text', type: 'STRING' },
    ];
    const groups: Cell[][][] = [
      [
        [0.5, 1.25, null, 3e9, -0.000001],
        [0.1, 0.1, 0.1, null, 0.2],
        [1, -2, 2147483647, null, -2147483648],
        [true, false, null, true, true],
        ['a', 'ünïcode ✓', null, '', 'a, "quoted"\nline'],
      ],
      [[7], [null], [5], [false], ['b']],
    ];
    const { rows, file } = await roundTrip(columns, groups);
    const expected = groups.flatMap((group) =>
      (group[0] as Cell[]).map((_, row) => Object.fromEntries(columns.map((column, position) => [column.name, (group[position] as Cell[])[row]]))),
    );
    expect(rows).toEqual(expected);
    const metadata = parquetMetadata(file);
    expect(metadata.row_groups.map((group) => Number(group.num_rows))).toEqual([5, 1]);
    expect(metadata.schema.slice(1).map((element) => [element.name, element.type, element.converted_type ?? null])).toEqual([
      ['time', 'DOUBLE', null],
      ['duration', 'DOUBLE', null],
      ['count', 'INT32', null],
      ['flag', 'BOOLEAN', null],
      ['text', 'BYTE_ARRAY', 'UTF8'],
    ]);
    expect(metadata.key_value_metadata).toEqual([{ key: 'servelab.t0', value: '1700000000.25' }]);
    expect(metadata.created_by).toBe('servelab');
    // Statistics of the first row group: numeric min and max (a zero minimum as -0, per the format), null counts.
    const statistics = (metadata.row_groups[0]?.columns ?? []).map((chunk) => chunk.meta_data?.statistics);
    expect(statistics[0]).toMatchObject({ min_value: -0.000001, max_value: 3e9, null_count: 1n });
    expect(statistics[2]).toMatchObject({ min_value: -2147483648, max_value: 2147483647, null_count: 1n });
    expect(statistics[4]).toEqual({ null_count: 1n });
  });

  it('encodes runs and scattered nulls in every alignment the RLE/bit-packed hybrid can meet', async () => {
    // Runs of 1..20 equal values and of nulls, starting at every offset modulo 8, so that runs are lent to the
    // bit-packed stretch before them in every way; plus a long run at the very end and the very start.
    const cells: Cell[] = [];
    for (let length = 1; length <= 20; length++) for (let copy = 0; copy < length; copy++) cells.push(length % 3 === 0 ? null : length);
    for (const value of randomInts(300, 3, 7)) cells.push(value === 0 ? null : value);
    for (let copy = 0; copy < 50; copy++) cells.push(4);
    const columns: ParquetHeader['columns'] = [{ name: 'count', type: 'INT32' }, { name: 'text', type: 'STRING' }];
    const { rows, file } = await roundTrip(columns, [[cells, cells.map((cell) => (cell === null ? null : `host-${cell}`))]]);
    expect(rows.map((row) => row['count'])).toEqual(cells);
    expect(rows.map((row) => row['text'])).toEqual(cells.map((cell) => (cell === null ? null : `host-${cell}`)));
    // Both columns repeat: dictionary-encoded, and far smaller than plain.
    const chunks = parquetMetadata(file).row_groups[0]?.columns ?? [];
    for (const chunk of chunks) expect(chunk.meta_data?.encodings).toContain('RLE_DICTIONARY');
    expect(Number(chunks[0]?.meta_data?.total_compressed_size)).toBeLessThan(cells.length * 2);
  });

  it('reads back dictionaries whose indices take more than a byte, and unique strings written plain', async () => {
    // 600 distinct values first (indices up to 599, ten bits), then a run of the last one (an RLE run whose value takes
    // two bytes), then random repeats.
    const indices = [...Array.from({ length: 600 }, (_, index) => index), ...Array.from({ length: 20 }, () => 599), ...randomInts(2000, 600, 3)];
    const columns: ParquetHeader['columns'] = [{ name: 'value', type: 'DOUBLE' }, { name: 'id', type: 'STRING' }];
    const values = indices.map((index) => index / 1000);
    const ids = indices.map((_, row) => `request-${row}`);
    const { rows, file } = await roundTrip(columns, [[values, ids]]);
    expect(rows.map((row) => row['value'])).toEqual(values);
    expect(rows.map((row) => row['id'])).toEqual(ids);
    const [value, id] = parquetMetadata(file).row_groups[0]?.columns ?? [];
    expect(value?.meta_data?.encodings).toContain('RLE_DICTIONARY');
    expect(id?.meta_data?.encodings).not.toContain('RLE_DICTIONARY');
  });

  it('writes columns of nulls only, and a file without row groups', async () => {
    const columns: ParquetHeader['columns'] = [{ name: 'a', type: 'DOUBLE' }, { name: 'b', type: 'STRING' }, { name: 'c', type: 'BOOLEAN' }];
    const { rows } = await roundTrip(columns, [[[null, null, null], [null, null, null], [null, null, null]]]);
    expect(rows).toEqual(Array.from({ length: 3 }, () => ({ a: null, b: null, c: null })));
    const empty = await roundTrip(columns, []);
    expect(empty.rows).toEqual([]);
    expect(parquetMetadata(empty.file).schema.slice(1).map((element) => element.name)).toEqual(['a', 'b', 'c']);
  });

  it('refuses a row group whose columns do not match the schema', () => {
    const encoder = new ParquetEncoder({ t0: 0, columns: [{ name: 'a', type: 'DOUBLE' }, { name: 'b', type: 'DOUBLE' }], rowGroupRows: 10 });
    expect(() => encoder.add([new Float64Array(2)])).toThrow(/2 columns|1 columns/);
    expect(() => encoder.add([new Float64Array(2), new Float64Array(3)])).toThrow(/"b" has 3 values/);
  });
});
