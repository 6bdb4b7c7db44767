import { ServelabError } from '../../../errors/servelab-error.js';
import type { WorkloadRequest } from '../../../types/workload.js';
import type { SeededRandom } from '../../../utils/random.js';
import { countWordTokens } from '../../../utils/word-tokenizer.js';
import type { DatasetLoader } from '../dataset-loader.js';
import { randomLength, randomWords, requireRatio, requireWholeNumber } from '../dataset-checks.js';
import { exactLengthPrompt } from '../../tokenizer/exact-length-prompt.js';
import { loadTokenizer } from '../../tokenizer/load-tokenizer.js';

/**
 * SGLang's generated-shared-prefix workload: `gspNumGroups` system prompts, each followed by `gspPromptsPerGroup`
 * different questions (`system + "\n\n" + question`), shuffled, so that requests of one group share a long prefix —
 * the case cache-aware routing and prefix caching are built for. As in SGLang the request count is groups × prompts
 * per group (numPrompts is not used) and lengths are exact unless `gspRangeRatio` < 1. With `gspZipfExponent`,
 * numPrompts requests draw their group from a Zipf law instead (group g with weight 1 / (g + 1)^exponent), for
 * skewed popularity. Each request carries its group in `prefixGroup`. With `tokenizerPath`, system prompts and
 * questions are decoded random tokens of that tokenizer, each exactly its drawn length, and `inputLength` is the exact
 * token count of the whole prompt (the joining blank line included).
 */
export const loadSharedPrefixDataset: DatasetLoader = async (settings, random) => {
  const groupCount = requireWholeNumber('gspNumGroups', settings.gspNumGroups ?? 64, 1);
  const promptsPerGroup = requireWholeNumber('gspPromptsPerGroup', settings.gspPromptsPerGroup ?? 16, 1);
  const systemPromptLength = requireWholeNumber('gspSystemPromptLen', settings.gspSystemPromptLen ?? 2048, 1);
  const questionLength = requireWholeNumber('gspQuestionLen', settings.gspQuestionLen ?? 128, 1);
  const outputLength = requireWholeNumber('gspOutputLen', settings.gspOutputLen ?? 256, 1);
  const ratio = requireRatio('gspRangeRatio', settings.gspRangeRatio ?? 1);
  const zipfExponent = settings.gspZipfExponent;
  const tokenizer = settings.tokenizerPath === undefined ? undefined : await loadTokenizer(settings.tokenizerPath);
  const randomText = (tokenCount: number): string =>
    tokenizer === undefined ? randomWords(tokenCount, random) : exactLengthPrompt(tokenizer, tokenCount, random).text;
  const countTokens = (text: string): number => (tokenizer === undefined ? countWordTokens(text) : tokenizer.countTokens(text));

  const systemPrompts = Array.from({ length: groupCount }, () => randomText(randomLength(systemPromptLength, ratio, random)));
  const groups: number[] = [];
  if (zipfExponent === undefined) {
    for (let group = 0; group < groupCount; group++) for (let prompt = 0; prompt < promptsPerGroup; prompt++) groups.push(group);
  } else {
    if (!(zipfExponent >= 0) || !Number.isFinite(zipfExponent)) {
      throw new ServelabError('INVALID_CONFIG', `gspZipfExponent must be a finite number of at least 0 (0 = equal groups), got ${String(zipfExponent)}`);
    }
    const count = requireWholeNumber('numPrompts', settings.numPrompts, 1);
    const drawGroup = zipfSampler(groupCount, zipfExponent, random);
    for (let index = 0; index < count; index++) groups.push(drawGroup());
  }
  const unordered: Omit<WorkloadRequest, 'datasetIndex'>[] = groups.map((group) => {
    const systemPrompt = systemPrompts[group] as string;
    const questionTokens = randomLength(questionLength, ratio, random);
    const prompt = `${systemPrompt}\n\n${randomText(questionTokens)}`;
    return { prompt, inputLength: countTokens(prompt), outputLength: randomLength(outputLength, ratio, random), prefixGroup: group };
  });
  random.shuffle(unordered);
  return unordered.map((request, index) => ({ datasetIndex: index, ...request }));
};

/** Draws group indices with probability proportional to 1 / (g + 1)^exponent, by inverse CDF and binary search. */
function zipfSampler(groupCount: number, exponent: number, random: SeededRandom): () => number {
  const cumulative = new Float64Array(groupCount);
  let total = 0;
  for (let group = 0; group < groupCount; group++) {
    total += 1 / Math.pow(group + 1, exponent);
    cumulative[group] = total;
  }
  return () => {
    const target = random.next() * total;
    let low = 0;
    let high = groupCount - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((cumulative[middle] as number) > target) high = middle;
      else low = middle + 1;
    }
    return low;
  };
}
