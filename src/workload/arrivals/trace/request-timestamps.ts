import { ServelabError } from '../../../errors/servelab-error.js';
import type { WorkloadRequest } from '../../../types/workload.js';

/**
 * An arrival schedule from the timestamps a custom dataset gave its requests: offsets relative to the first request,
 * every gap multiplied by `timeScale`. Every request needs a timestamp, in non-decreasing order.
 */
export function scheduleFromRequestTimestamps(requests: readonly WorkloadRequest[], timeScale = 1): Float64Array {
  if (!(timeScale > 0) || !Number.isFinite(timeScale)) {
    throw new ServelabError('INVALID_CONFIG', `traceTimeScale must be a finite number above 0, got ${String(timeScale)}`);
  }
  const offsetsMs = new Float64Array(requests.length);
  const originS = requests[0]?.timestampS;
  let previousS = originS ?? 0;
  requests.forEach((request, index) => {
    const timestampS = request.timestampS;
    if (timestampS === undefined || originS === undefined) {
      throw new ServelabError(
        'INVALID_DATASET',
        `request ${index} of the dataset has no timestamp: give every row a "timestamp" to replay the dataset's own arrival times`,
      );
    }
    if (timestampS < previousS) {
      throw new ServelabError('INVALID_DATASET', `request ${index} of the dataset has a timestamp earlier than the one before it; sort the rows by time`);
    }
    previousS = timestampS;
    offsetsMs[index] = (timestampS - originS) * 1000 * timeScale;
  });
  return offsetsMs;
}
