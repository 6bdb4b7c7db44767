import { ServelabError } from '../../errors/servelab-error.js';
import type { RequestRecord } from '../../types/record.js';
import type { EpochSeconds } from '../../types/time.js';

/**
 * Puts the workers' records back in workload order. Each record's id is `${requestIdPrefix}${index}` with its index in
 * the whole workload (the workers were given those indices), so the order is recovered from the ids themselves.
 */
export function mergeWorkerRecords(recordsByWorker: readonly RequestRecord[][], requestIdPrefix: string, requestCount: number): RequestRecord[] {
  const byIndex = new Array<RequestRecord | undefined>(requestCount);
  for (const records of recordsByWorker) {
    for (const record of records) {
      const index = Number(record.requestId.slice(requestIdPrefix.length));
      if (!Number.isInteger(index) || index < 0 || index >= requestCount || byIndex[index] !== undefined) {
        throw new ServelabError('INTERNAL', `a load worker returned a record with an unexpected id "${record.requestId}"; this is a bug in servelab`);
      }
      byIndex[index] = record;
    }
  }
  return byIndex.filter((record): record is RequestRecord => record !== undefined);
}

/** The latest of the workers' end times (each worker ends when its last request does). */
export function latestEndTime(endTimes: readonly EpochSeconds[], fallback: EpochSeconds): EpochSeconds {
  return endTimes.reduce((latest, endTime) => Math.max(latest, endTime), fallback);
}
