import { describe, expect, it } from 'vitest';
import { RecordStore } from '../../src/load/record-store.js';
import { STORED_COLUMNS } from '../../src/analysis/record-columns.js';
import type { RequestRecord } from '../../src/types/record.js';

const full: RequestRecord = {
  requestId: 'run-7-42',
  datasetIndex: 42,
  warmup: false,
  prefixGroup: 3,
  sessionId: 'session-a',
  inputLength: 512,
  expectedOutputLength: 128,
  scheduledTime: 1763712000.123456,
  dispatchTime: 1763712000.123501,
  heldForConcurrency: true,
  arrivalTime: 1763712000.1236,
  routerSendTime: 1763712000.1238,
  host: 'http://127.0.0.1:30001',
  retries: 1,
  serverCreatedTime: 1763712000.124,
  queueTimeStart: 1763712000.1245,
  queueTimeEnd: 1763712000.13,
  serverFirstTokenTime: 1763712000.16,
  firstTokenTime: 1763712000.161,
  finishTime: 1763712001.5,
  actualPromptTokens: 512,
  actualOutputTokens: 128,
  cachedTokens: 256,
  numRetractions: 0,
  finishReason: 'length',
  interTokenLatencies: [0.01, 0.0125, 0.011],
  success: true,
  httpStatus: 200,
};

describe('RecordStore', () => {
  it('gives back exactly the records it was given, full and minimal', () => {
    const store = new RecordStore({ requestIdPrefix: 'run-7-' });
    const minimal: RequestRecord = {
      requestId: 'other-id',
      datasetIndex: 0,
      warmup: true,
      inputLength: 1,
      expectedOutputLength: 1,
      scheduledTime: 1763712000,
      success: false,
      error: 'connect_refused',
      errorMessage: 'connect ECONNREFUSED 127.0.0.1:1',
    };
    store.add(full);
    store.add(minimal);
    const back = store.get(0);
    expect({ ...back, interTokenLatencies: undefined }).toEqual({ ...full, interTokenLatencies: undefined });
    back.interTokenLatencies?.forEach((gap, index) => expect(gap).toBeCloseTo(full.interTokenLatencies?.[index] ?? 0, 7));
    expect(store.get(1)).toEqual(minimal);
    expect(Object.keys(store.get(1)).sort()).toEqual(Object.keys(minimal).sort());
    expect(store.size).toBe(2);
  });

  it('keeps ids that do not fit the prefix pattern, out-of-range integers and unknown fields', () => {
    const store = new RecordStore({ requestIdPrefix: 'p-' });
    const odd = { ...full, requestId: 'p-007', datasetIndex: 2 ** 40, futureField: { nested: true } } as RequestRecord;
    store.add(odd);
    store.add({ ...full, requestId: 'p-1e3' });
    expect(store.get(0)).toMatchObject({ requestId: 'p-007', datasetIndex: 2 ** 40, futureField: { nested: true } });
    expect(store.get(1).requestId).toBe('p-1e3');
    expect(() => store.get(2)).toThrow(RangeError);
  });

  it('spans chunks, iterates in order and gives time columns', () => {
    const store = new RecordStore({ requestIdPrefix: 'r-' });
    for (let index = 0; index < 10_000; index++) {
      store.add({ requestId: `r-${index}`, datasetIndex: index, warmup: false, inputLength: 8, expectedOutputLength: 4, scheduledTime: 1000 + index / 1000, success: true, ...(index % 2 === 0 ? { finishTime: 2000 + index } : {}) });
    }
    expect(store.get(9999)).toMatchObject({ requestId: 'r-9999', datasetIndex: 9999 });
    expect(store.get(9999).finishTime).toBeUndefined();
    expect(store.get(9998).finishTime).toBe(2000 + 9998);
    const finishTimes = store.timeColumn('finishTime');
    expect(finishTimes).toHaveLength(10_000);
    expect(finishTimes[4]).toBe(2004);
    expect(Number.isNaN(finishTimes[5])).toBe(true);
    let count = 0;
    for (const record of store) expect(record.datasetIndex).toBe(count++);
    expect(count).toBe(10_000);
  });

  it('holds a record in its fixed columns in under 300 bytes', () => {
    const store = new RecordStore();
    for (let index = 0; index < 50_000; index++) store.add({ ...full, requestId: String(index) });
    expect(store.fixedBytesPerRecord()).toBeLessThan(300);
    expect(store.fixedBytesPerRecord()).toBeGreaterThan(100);
  });

  it('spends nothing on a field no request of a chunk has, and reads it back absent there and present elsewhere', () => {
    const store = new RecordStore({ requestIdPrefix: 'r-' });
    const plain = (index: number) => ({ requestId: `r-${index}`, warmup: false, success: true, scheduledTime: 1000 + index, finishTime: 1001 + index, datasetIndex: index, inputLength: 8, expectedOutputLength: 4 });
    for (let index = 0; index < 8192; index++) store.add(plain(index));
    // 2 times and 3 integers a row, besides the id, the gap bookkeeping and the flags: 2 × 8 + 3 × 4 + 8 + 8 + 4 + 1 bytes.
    expect(store.fixedBytesPerRecord()).toBe(49);
    // A field that only the third chunk's requests have: allocated for that chunk alone.
    for (let index = 8192; index < 8200; index++) store.add({ ...plain(index), serverFinishTime: 2000 + index, host: 'node-a' });
    expect(store.get(8199)).toMatchObject({ serverFinishTime: 2000 + 8199, host: 'node-a' });
    expect(store.get(100).serverFinishTime).toBeUndefined();
    expect(store.get(100).host).toBeUndefined();
    expect(store.get(100)).toEqual(plain(100));
    expect(store.timeColumn('serverFinishTime')[8195]).toBe(2000 + 8195);
    expect(Number.isNaN(store.timeColumn('serverFinishTime')[8191])).toBe(true);
  });
});

describe('RecordStore and the column table', () => {
  it('keeps every stored column of the table, each to a value of its kind that no other field has', () => {
    const fields: Record<string, unknown> = { warmup: false };
    STORED_COLUMNS.forEach((column, index) => {
      fields[column.field] =
        column.kind === 'time' ? 1763712000 + index / 8 : column.kind === 'string' ? `text ${index}` : column.kind === 'boolean' ? index % 2 === 0 : column.kind === 'float' ? index + 0.5 : index;
    });
    const store = new RecordStore({ requestIdPrefix: 'r-' });
    store.add(fields as unknown as RequestRecord);
    expect(store.get(0)).toEqual(fields);
  });

  it('gives back a value of another type than its column exactly (a hand-edited requests.jsonl), never drops it', () => {
    const odd = { ...full, host: 42, sessionId: true, finishTime: 'late', heldForConcurrency: 'yes', errorMessage: 7 } as unknown as RequestRecord;
    const store = new RecordStore();
    store.add(odd);
    expect({ ...store.get(0), interTokenLatencies: undefined }).toEqual({ ...odd, interTokenLatencies: undefined });
  });
});
