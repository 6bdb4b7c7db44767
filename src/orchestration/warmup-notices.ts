import type { RequestRecord } from '../types/record.js';

/**
 * One notice per failed warmup request: a warmup that fails or times out is reported and the run goes on, never
 * waited on forever (each has the `warmupTimeoutMs` deadline).
 */
export function warmupNotices(warmupRecords: readonly RequestRecord[]): string[] {
  const failed = warmupRecords.filter((record) => !record.success);
  if (failed.length === 0) return [];
  const first = failed[0] as RequestRecord;
  return [
    `${failed.length} of ${warmupRecords.length} warmup requests failed (first: ${first.error ?? 'error'}: ${first.errorMessage ?? 'no message'}); ` +
      'the measured load ran anyway, so its first requests may include the warm-up cost',
  ];
}
