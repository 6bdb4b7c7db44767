import { ServelabError } from '../errors/servelab-error.js';
import type { RunLoadOptions } from '../types/load.js';
import { checkConcurrencyStages } from './concurrency-stages.js';

/** Checks the options `runLoad` would reject, so that a caller splitting a run can fail before it starts anything. */
export function validateRunLoadOptions(options: Omit<RunLoadOptions, 'client'>): void {
  const mode = options.mode ?? { kind: 'open' };
  if (options.startAtEpochMs !== undefined && !Number.isFinite(options.startAtEpochMs)) {
    throw new ServelabError('INVALID_CONFIG', `startAtEpochMs must be a finite epoch time in milliseconds, got ${options.startAtEpochMs}`);
  }
  if (options.requestIndices !== undefined && options.requestIndices.length !== options.requests.length) {
    throw new ServelabError(
      'INVALID_CONFIG',
      `requestIndices has ${options.requestIndices.length} entries for ${options.requests.length} requests; give one per request`,
    );
  }
  if (options.maxConcurrency !== undefined && !(Number.isInteger(options.maxConcurrency) && options.maxConcurrency >= 1)) {
    throw new ServelabError('INVALID_CONFIG', `maxConcurrency must be a whole number of at least 1, got ${options.maxConcurrency}`);
  }
  if (mode.kind === 'closed') {
    if (mode.stages !== undefined) checkConcurrencyStages(mode.stages);
    else if (!(Number.isInteger(mode.concurrency) && mode.concurrency >= 1)) {
      throw new ServelabError('INVALID_CONFIG', `closed-loop concurrency must be a whole number of at least 1, got ${mode.concurrency}`);
    }
    const thinkTimeMs = mode.thinkTimeMs ?? 0;
    if (!(thinkTimeMs >= 0 && Number.isFinite(thinkTimeMs))) {
      throw new ServelabError('INVALID_CONFIG', `think time must be a finite number of at least 0 ms, got ${thinkTimeMs}`);
    }
    return;
  }
  const offsetsMs = options.arrivalOffsetsMs;
  if (offsetsMs.length !== options.requests.length) {
    throw new ServelabError(
      'INVALID_CONFIG',
      `the arrival schedule has ${offsetsMs.length} instants for ${options.requests.length} requests; build it with one per request`,
    );
  }
  let previousMs = 0;
  for (let index = 0; index < offsetsMs.length; index++) {
    const offsetMs = offsetsMs[index] as number;
    if (!(offsetMs >= previousMs) || !Number.isFinite(offsetMs)) {
      throw new ServelabError(
        'INVALID_CONFIG',
        `arrival offset ${index} (${offsetMs} ms) is not a finite number at or after the previous one; offsets must be non-decreasing from 0`,
      );
    }
    previousMs = offsetMs;
  }
}
