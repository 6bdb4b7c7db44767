import type { WorkloadRequest } from '../../../types/workload.js';
import type { DatasetLoader } from '../dataset-loader.js';
import { randomLength, randomWords, requireRatio, requireWholeNumber } from '../dataset-checks.js';
import { exactLengthPrompt } from '../../tokenizer/exact-length-prompt.js';
import { loadTokenizer } from '../../tokenizer/load-tokenizer.js';

/**
 * Text prompts of random length: input and output lengths uniform in [max(floor(len × ratio), 1), len], as SGLang's
 * bench_serving draws them. Prompts are words from a list of common words, so their length is exact in the word
 * tokenizer of the simulated engine and close to it for real tokenizers. With `tokenizerPath`, prompts are instead
 * decoded random tokens of that tokenizer, exactly the drawn number of them (use `random-ids` for exact ids).
 * SGLang cuts its random prompts out of ShareGPT text (downloading it when missing); servelab never downloads.
 */
export const loadRandomDataset: DatasetLoader = async (settings, random) => {
  const count = requireWholeNumber('numPrompts', settings.numPrompts, 1);
  const inputLength = requireWholeNumber('randomInputLen', settings.randomInputLen ?? 1024, 1);
  const outputLength = requireWholeNumber('randomOutputLen', settings.randomOutputLen ?? 1024, 1);
  const ratio = requireRatio('randomRangeRatio', settings.randomRangeRatio ?? 0);
  const inputLengths = Array.from({ length: count }, () => randomLength(inputLength, ratio, random));
  const outputLengths = Array.from({ length: count }, () => randomLength(outputLength, ratio, random));
  const tokenizer = settings.tokenizerPath === undefined ? undefined : await loadTokenizer(settings.tokenizerPath);
  const requests: WorkloadRequest[] = inputLengths.map((length, index) => ({
    datasetIndex: index,
    prompt: tokenizer === undefined ? randomWords(length, random) : exactLengthPrompt(tokenizer, length, random).text,
    inputLength: length,
    outputLength: outputLengths[index] as number,
  }));
  return requests;
};
