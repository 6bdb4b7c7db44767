import { ServelabError } from '../../errors/servelab-error.js';
import type { ArrivalSettings } from '../../types/workload-settings.js';
import type { SeededRandom } from '../../utils/random.js';
import { loadFromRegistryOrModule } from '../module-registry.js';
import type { ArrivalProcess } from './arrival-process.js';
import { constantArrivals } from './constant/constant-arrivals.js';
import { gammaArrivals } from './gamma/gamma-arrivals.js';
import { poissonArrivals } from './poisson/poisson-arrivals.js';
import { createStagedOffsetsMs } from './stages/staged-schedule.js';
import { traceArrivals } from './trace/trace-arrivals.js';

/** The built-in arrival processes by name. */
export const arrivalProcesses: Readonly<Record<string, ArrivalProcess>> = {
  poisson: poissonArrivals,
  gamma: gammaArrivals,
  constant: constantArrivals,
  trace: traceArrivals,
};

function isArrivalProcess(value: unknown): value is ArrivalProcess {
  return typeof value === 'object' && value !== null && typeof (value as ArrivalProcess).createOffsetsMs === 'function';
}

/** A built-in arrival process, or one loaded from a module path (default export or `arrivalProcess`). */
export function resolveArrivalProcess(name: string): Promise<ArrivalProcess> {
  return loadFromRegistryOrModule('arrival process', name, arrivalProcesses, 'arrivalProcess', isArrivalProcess);
}

/**
 * Each request's arrival offset in milliseconds from the schedule origin, non-decreasing. Pure: the same settings and
 * seed give the same schedule. `process` overrides the lookup (for a process loaded with `resolveArrivalProcess`).
 */
export function createArrivalSchedule(
  settings: ArrivalSettings,
  count: number,
  random: SeededRandom,
  process: ArrivalProcess | undefined = arrivalProcesses[settings.process],
): Float64Array {
  if (!Number.isInteger(count) || count < 0) {
    throw new ServelabError('INVALID_CONFIG', `the number of requests must be a whole number of at least 0, got ${count}`);
  }
  const rate = settings.requestRate;
  if (settings.process !== 'trace' && settings.stages === undefined && !(rate > 0)) {
    throw new ServelabError(
      'INVALID_CONFIG',
      `requestRate must be above 0 requests per second (or Infinity to send every request at once), got ${String(rate)}`,
    );
  }
  if (settings.draw !== undefined && settings.draw !== 'conditioned' && settings.draw !== 'independent') {
    throw new ServelabError('INVALID_CONFIG', `draw must be "conditioned" or "independent", got ${JSON.stringify(settings.draw)}`);
  }
  if (process === undefined) {
    throw new ServelabError(
      'INVALID_CONFIG',
      `unknown arrival process "${settings.process}": use one of ${Object.keys(arrivalProcesses).join(', ')}, ` +
        'or load a module with resolveArrivalProcess and pass it in',
    );
  }
  let offsetsMs: Float64Array;
  if (settings.stages !== undefined) {
    if (process.unitGaps === undefined) {
      throw new ServelabError('INVALID_CONFIG', `the ${process.name} arrival process cannot follow stages; use poisson, gamma or constant`);
    }
    offsetsMs = createStagedOffsetsMs(settings.stages, count, process.unitGaps(settings, random));
  } else {
    offsetsMs = process.createOffsetsMs(settings, count, random);
  }
  if (offsetsMs.length !== count) {
    throw new ServelabError('INTERNAL', `arrival process ${process.name} returned ${offsetsMs.length} offsets for ${count} requests`);
  }
  for (let index = 1; index < count; index++) {
    if (!((offsetsMs[index] as number) >= (offsetsMs[index - 1] as number))) {
      throw new ServelabError('INTERNAL', `arrival process ${process.name} returned a decreasing schedule at request ${index}`);
    }
  }
  return offsetsMs;
}
