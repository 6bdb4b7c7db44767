import { ServelabError } from '../../../errors/servelab-error.js';
import type { WorkloadRequest } from '../../../types/workload.js';
import type { SeededRandom } from '../../../utils/random.js';
import { countWordTokens } from '../../../utils/word-tokenizer.js';
import type { DatasetLoader } from '../dataset-loader.js';
import { randomLength, randomWords, requireRatio, requireWholeNumber } from '../dataset-checks.js';
import { exactLengthPrompt } from '../../tokenizer/exact-length-prompt.js';
import { loadTokenizer } from '../../tokenizer/load-tokenizer.js';

/**
 * SGLang's generated-shared-prefix workload (python/sglang/benchmark/datasets/generated_shared_prefix.py):
 * `gspNumGroups` system prompts, each followed by different questions (`system + "\n\n" + question`), shuffled
 * unless `gspOrdered`, so that requests of one group share a long prefix — the case cache-aware routing and prefix
 * caching are built for. As in SGLang the request count is groups × prompts per group (numPrompts is not used) and
 * lengths are exact unless `gspRangeRatio` < 1.
 * - `gspGroupDistribution: 'zipf'` draws each of those groups × prompts slots' group with probability
 *   ∝ 1 / rank^`gspZipfAlpha` (group 0 the hottest), as SGLang does; servelab's older `gspZipfExponent` instead makes
 *   numPrompts requests with weights 1 / (g + 1)^exponent.
 * - `gspNumTurns` > 1 makes each prompt a conversation: turn t sends the first prompt and questions 2..t joined by
 *   blank lines, so each turn extends the one before (a growing shared prefix). Deliberate difference: SGLang's client
 *   puts the model's earlier answers between the turns and sends turn t after turn t−1 answered; a generated workload
 *   has no answers, and turns follow the arrival process in conversation order.
 * - `gspSendRoutingKey` gives every request of a group the same `routingKey`, sent as `X-SMG-Routing-Key`.
 * Each request carries its group in `prefixGroup`. With `tokenizerPath`, system prompts and questions are decoded
 * random tokens of that tokenizer, each exactly its drawn length, and `inputLength` is the exact token count of the
 * whole prompt (the joining blank line included).
 */
export const loadSharedPrefixDataset: DatasetLoader = async (settings, random) => {
  const groupCount = requireWholeNumber('gspNumGroups', settings.gspNumGroups ?? 64, 1);
  const promptsPerGroup = requireWholeNumber('gspPromptsPerGroup', settings.gspPromptsPerGroup ?? 16, 1);
  const systemPromptLength = requireWholeNumber('gspSystemPromptLen', settings.gspSystemPromptLen ?? 2048, 1);
  const questionLength = requireWholeNumber('gspQuestionLen', settings.gspQuestionLen ?? 128, 1);
  const outputLength = requireWholeNumber('gspOutputLen', settings.gspOutputLen ?? 256, 1);
  const turnCount = requireWholeNumber('gspNumTurns', settings.gspNumTurns ?? 1, 1);
  const ratio = requireRatio('gspRangeRatio', settings.gspRangeRatio ?? 1);
  const zipfExponent = settings.gspZipfExponent;
  const distribution = settings.gspGroupDistribution ?? 'uniform';
  const zipfAlpha = settings.gspZipfAlpha;
  if (distribution === 'zipf' && !(zipfAlpha !== undefined && zipfAlpha > 0 && Number.isFinite(zipfAlpha))) {
    throw new ServelabError('INVALID_CONFIG', `--gsp-group-distribution zipf needs --gsp-zipf-alpha, a finite number above 0 (got ${String(zipfAlpha)})`);
  }
  if (distribution === 'zipf' && zipfExponent !== undefined) {
    throw new ServelabError('INVALID_CONFIG', 'give either --gsp-group-distribution zipf with --gsp-zipf-alpha (SGLang\'s) or --gsp-zipf-exponent, not both');
  }
  const tokenizer = settings.tokenizerPath === undefined ? undefined : await loadTokenizer(settings.tokenizerPath);
  const randomText = (tokenCount: number): string =>
    tokenizer === undefined ? randomWords(tokenCount, random) : exactLengthPrompt(tokenizer, tokenCount, random).text;
  const countTokens = (text: string): number => (tokenizer === undefined ? countWordTokens(text) : tokenizer.countTokens(text));

  const systemPrompts = Array.from({ length: groupCount }, () => randomText(randomLength(systemPromptLength, ratio, random)));
  const groups: number[] = [];
  if (distribution === 'zipf') {
    const drawGroup = zipfSampler(groupCount, zipfAlpha as number, random);
    for (let slot = 0; slot < groupCount * promptsPerGroup; slot++) groups.push(drawGroup());
  } else if (zipfExponent === undefined) {
    for (let group = 0; group < groupCount; group++) for (let prompt = 0; prompt < promptsPerGroup; prompt++) groups.push(group);
  } else {
    if (!(zipfExponent >= 0) || !Number.isFinite(zipfExponent)) {
      throw new ServelabError('INVALID_CONFIG', `gspZipfExponent must be a finite number of at least 0 (0 = equal groups), got ${String(zipfExponent)}`);
    }
    const count = requireWholeNumber('numPrompts', settings.numPrompts, 1);
    const drawGroup = zipfSampler(groupCount, zipfExponent, random);
    for (let index = 0; index < count; index++) groups.push(drawGroup());
  }
  // One routing key per group and run, as SGLang's benchmark makes them.
  const runTag = settings.gspSendRoutingKey === true ? random.nextUint32().toString(16).padStart(8, '0') : '';
  const conversations: Omit<WorkloadRequest, 'datasetIndex'>[][] = groups.map((group, conversation) => {
    const systemPrompt = systemPrompts[group] as string;
    let prompt = `${systemPrompt}\n\n${randomText(randomLength(questionLength, ratio, random))}`;
    const output = randomLength(outputLength, ratio, random);
    const turns: Omit<WorkloadRequest, 'datasetIndex'>[] = [];
    for (let turn = 0; turn < turnCount; turn++) {
      if (turn > 0) prompt = `${prompt}\n\n${randomText(randomLength(questionLength, ratio, random))}`;
      const request: Omit<WorkloadRequest, 'datasetIndex'> = { prompt, inputLength: countTokens(prompt), outputLength: output, prefixGroup: group };
      if (turnCount > 1) request.sessionId = `gsp-${conversation}`;
      if (settings.gspSendRoutingKey === true) request.routingKey = `${runTag}_${group}`;
      turns.push(request);
    }
    return turns;
  });
  if (settings.gspOrdered !== true) random.shuffle(conversations);
  return interleaveTurns(conversations, random, settings.gspOrdered === true).map((request, index) => ({ datasetIndex: index, ...request }));
};

/**
 * Conversations' turns in sending order. Ordered: conversation after conversation. Otherwise the turns are shuffled
 * as a whole, then each conversation's turns are put back in turn order on the positions they drew, so a later turn
 * never goes out before an earlier one of its conversation.
 */
function interleaveTurns(conversations: Omit<WorkloadRequest, 'datasetIndex'>[][], random: SeededRandom, ordered: boolean): Omit<WorkloadRequest, 'datasetIndex'>[] {
  const flat = conversations.flat();
  if (ordered || conversations.every((turns) => turns.length === 1)) return flat;
  const owners: number[] = [];
  conversations.forEach((turns, conversation) => {
    for (let turn = 0; turn < turns.length; turn++) owners.push(conversation);
  });
  random.shuffle(owners);
  const nextTurn = new Array<number>(conversations.length).fill(0);
  return owners.map((conversation) => {
    const turn = nextTurn[conversation] as number;
    nextTurn[conversation] = turn + 1;
    return (conversations[conversation] as Omit<WorkloadRequest, 'datasetIndex'>[])[turn] as Omit<WorkloadRequest, 'datasetIndex'>;
  });
}

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
