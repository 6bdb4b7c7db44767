import type { WorkloadRequest } from '../../../types/workload.js';
import type { DatasetLoader } from '../dataset-loader.js';
import { randomLength, requireRatio, requireWholeNumber } from '../dataset-checks.js';

/**
 * Prompts as token ids (`input_ids`), so their length is exact whatever the model's tokenizer. Lengths follow the
 * `random` dataset's rule; ids are uniform in [0, randomIdsVocabSize), default 32000 so that every common vocabulary
 * holds them.
 */
export const loadRandomIdsDataset: DatasetLoader = (settings, random) => {
  const count = requireWholeNumber('numPrompts', settings.numPrompts, 1);
  const inputLength = requireWholeNumber('randomInputLen', settings.randomInputLen ?? 1024, 1);
  const outputLength = requireWholeNumber('randomOutputLen', settings.randomOutputLen ?? 1024, 1);
  const ratio = requireRatio('randomRangeRatio', settings.randomRangeRatio ?? 0);
  const vocabSize = requireWholeNumber('randomIdsVocabSize', settings.randomIdsVocabSize ?? 32_000, 2);
  const inputLengths = Array.from({ length: count }, () => randomLength(inputLength, ratio, random));
  const outputLengths = Array.from({ length: count }, () => randomLength(outputLength, ratio, random));
  const requests: WorkloadRequest[] = inputLengths.map((length, index) => {
    // The same draws in the same order as ever, in an array a quarter (or half) the size of a number[].
    const inputIds = vocabSize <= 65_536 ? new Uint16Array(length) : new Uint32Array(length);
    random.fillIntegers(inputIds, 0, vocabSize - 1);
    return { datasetIndex: index, inputIds, inputLength: length, outputLength: outputLengths[index] as number };
  });
  return Promise.resolve(requests);
};
