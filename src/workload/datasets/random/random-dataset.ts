import type { WorkloadRequest } from '../../../types/workload.js';
import type { DatasetLoader } from '../dataset-loader.js';
import { randomLength, randomWords, requireRatio, requireWholeNumber } from '../dataset-checks.js';

/**
 * Text prompts of random length: input and output lengths uniform in [max(floor(len × ratio), 1), len], as SGLang's
 * bench_serving draws them. Prompts are words from a list of common words, so their length is exact in the word
 * tokenizer of the simulated engine and close to it for real tokenizers (use `random-ids` when it must be exact).
 * SGLang cuts its random prompts out of ShareGPT text (downloading it when missing); servelab never downloads.
 */
export const loadRandomDataset: DatasetLoader = (settings, random) => {
  const count = requireWholeNumber('numPrompts', settings.numPrompts, 1);
  const inputLength = requireWholeNumber('randomInputLen', settings.randomInputLen ?? 1024, 1);
  const outputLength = requireWholeNumber('randomOutputLen', settings.randomOutputLen ?? 1024, 1);
  const ratio = requireRatio('randomRangeRatio', settings.randomRangeRatio ?? 0);
  const inputLengths = Array.from({ length: count }, () => randomLength(inputLength, ratio, random));
  const outputLengths = Array.from({ length: count }, () => randomLength(outputLength, ratio, random));
  const requests: WorkloadRequest[] = inputLengths.map((length, index) => ({
    datasetIndex: index,
    prompt: randomWords(length, random),
    inputLength: length,
    outputLength: outputLengths[index] as number,
  }));
  return Promise.resolve(requests);
};
