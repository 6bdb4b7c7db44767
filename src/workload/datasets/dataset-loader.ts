import type { WorkloadRequest } from '../../types/workload.js';
import type { DatasetSettings } from '../../types/workload-settings.js';
import type { SeededRandom } from '../../utils/random.js';

/**
 * Produces a workload's requests, in the order they will be sent, with `datasetIndex` = position in that order.
 * Everything random comes from `random`, so a seed reproduces the workload exactly. Nothing is ever downloaded.
 */
export type DatasetLoader = (settings: DatasetSettings, random: SeededRandom) => Promise<WorkloadRequest[]>;
