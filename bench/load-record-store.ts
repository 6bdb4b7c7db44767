/**
 * Memory per finished request: servelab's column store (src/load/record-store.ts) against plain record objects in an
 * array (the baseline), measured in the same run by heap growth after a forced garbage collection. Per-token gaps are
 * left out (SPEC §11 counts them aside). Target: under 300 bytes per record.
 *
 * Run: npx tsc -p tsconfig.build.json && node --expose-gc dist/bench/load-record-store.js   (RECORDS=1000000 default)
 */
import { RecordStore } from '../src/load/record-store.js';
import type { RequestRecord } from '../src/types/record.js';

const COUNT = Number(process.env['RECORDS'] ?? 1_000_000);
const HOSTS = ['http://127.0.0.1:30001', 'http://127.0.0.1:30002', 'http://127.0.0.1:30003', 'http://127.0.0.1:30004'];

function makeRecord(index: number): RequestRecord {
  const scheduled = 1763712000 + index / 1000;
  return {
    requestId: `servelab-1a2b3c4d-${index}`,
    datasetIndex: index,
    warmup: false,
    prefixGroup: index % 64,
    inputLength: 1024,
    expectedOutputLength: 256,
    scheduledTime: scheduled,
    dispatchTime: scheduled + 0.00001,
    arrivalTime: scheduled + 0.00005,
    routerSendTime: scheduled + 0.0002,
    host: HOSTS[index % HOSTS.length] as string,
    serverCreatedTime: scheduled + 0.0004,
    queueTimeStart: scheduled + 0.0006,
    queueTimeEnd: scheduled + 0.02,
    serverFirstTokenTime: scheduled + 0.06,
    firstTokenTime: scheduled + 0.061,
    finishTime: scheduled + 1.5 + (index % 7) / 100,
    actualPromptTokens: 1024,
    actualOutputTokens: 256,
    cachedTokens: (index * 37) % 1024,
    numRetractions: 0,
    finishReason: 'length',
    success: true,
    httpStatus: 200,
  };
}

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (collect === undefined) throw new Error('run with node --expose-gc');
  collect();
  collect();
}

function heapUsed(): number {
  gc();
  return process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
}

function measure(build: () => unknown): { bytesPerRecord: number; keep: unknown } {
  const before = heapUsed();
  const keep = build();
  const after = heapUsed();
  return { bytesPerRecord: (after - before) / COUNT, keep };
}

const baseline = measure(() => {
  const records: RequestRecord[] = [];
  for (let index = 0; index < COUNT; index++) records.push(makeRecord(index));
  return records;
});
const baselineBytes = baseline.bytesPerRecord;
baseline.keep = undefined;

const store = measure(() => {
  const records = new RecordStore({ requestIdPrefix: 'servelab-1a2b3c4d-' });
  for (let index = 0; index < COUNT; index++) records.add(makeRecord(index));
  return records;
});
const check = (store.keep as RecordStore).get(COUNT - 1);
if (check.finishTime !== makeRecord(COUNT - 1).finishTime) throw new Error('the store did not give the record back');

console.log(`records: ${COUNT.toLocaleString('en')}`);
console.log(`plain objects (baseline): ${baselineBytes.toFixed(0)} bytes per record`);
console.log(`record store:             ${store.bytesPerRecord.toFixed(0)} bytes per record   target < 300   ${store.bytesPerRecord < 300 ? 'met' : 'MISSED'}`);
console.log(`ratio store / baseline:   ${(store.bytesPerRecord / baselineBytes).toFixed(2)}`);
