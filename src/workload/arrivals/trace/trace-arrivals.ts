import { readFileSync } from 'node:fs';
import { ServelabError } from '../../../errors/servelab-error.js';
import type { ArrivalProcess } from '../arrival-process.js';
import { parseArrivalTrace } from './parse-arrival-trace.js';

/**
 * Trace replay: arrivals at the file's timestamps, relative to the first, with every gap multiplied by
 * `traceTimeScale` (2 = replay at half speed). The request rate is not used: the trace sets it. The file is read
 * synchronously because schedules are built once, before a run starts.
 */
export const traceArrivals: ArrivalProcess = {
  name: 'trace',
  createOffsetsMs(settings, count) {
    const tracePath = settings.tracePath;
    if (tracePath === undefined) {
      throw new ServelabError('INVALID_CONFIG', 'the trace arrival process needs tracePath (--trace-path), a file of arrival times');
    }
    const timeScale = settings.traceTimeScale ?? 1;
    if (!(timeScale > 0) || !Number.isFinite(timeScale)) {
      throw new ServelabError('INVALID_CONFIG', `traceTimeScale must be a finite number above 0, got ${String(timeScale)}`);
    }
    let text: string;
    try {
      text = readFileSync(tracePath, 'utf8');
    } catch (error) {
      throw new ServelabError('FILE_NOT_FOUND', `cannot read the arrival trace ${tracePath}: check --trace-path`, { cause: error });
    }
    const timestampsMs = parseArrivalTrace(text, tracePath);
    if (timestampsMs.length < count) {
      throw new ServelabError(
        'INVALID_CONFIG',
        `the trace ${tracePath} holds ${timestampsMs.length} arrivals but ${count} requests were asked for; ` +
          `set numPrompts to at most ${timestampsMs.length}`,
      );
    }
    const originMs = timestampsMs[0] as number;
    const offsetsMs = new Float64Array(count);
    for (let index = 0; index < count; index++) {
      offsetsMs[index] = ((timestampsMs[index] as number) - originMs) * timeScale;
    }
    return offsetsMs;
  },
};
