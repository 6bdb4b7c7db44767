import type { RequestRecord } from '../types/record.js';

/** The measured records: warmups left out; the array itself when it holds none (no copy). */
export function measuredRecords(records: readonly RequestRecord[]): readonly RequestRecord[] {
  return records.some((record) => record.warmup) ? records.filter((record) => !record.warmup) : records;
}
