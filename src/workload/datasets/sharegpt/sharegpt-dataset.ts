import { ServelabError } from '../../../errors/servelab-error.js';
import type { WorkloadRequest } from '../../../types/workload.js';
import { countWordTokens } from '../../../utils/word-tokenizer.js';
import type { DatasetLoader } from '../dataset-loader.js';
import { requireWholeNumber } from '../dataset-checks.js';
import { datasetFileError } from '../file-errors.js';
import { loadTokenizer } from '../../tokenizer/load-tokenizer.js';
import { JsonArrayFormatError, readJsonArrayElements } from './json-array-reader.js';

const SHAREGPT_FILE = 'a ShareGPT-format JSON file (an array of {"conversations": [{"from": "human", "value": ...}, ...]})';
const QUESTION_ROLES = new Set(['human', 'user']);
const ANSWER_ROLES = new Set(['gpt', 'assistant', 'chatgpt', 'bard', 'bing', 'model']);

/** Shortest prompt and answer kept, in tokens; shorter pairs are dropped (SGLang bench_serving's current threshold). */
const MIN_PAIR_TOKENS = 2;

interface Pair {
  prompt: string;
  answer: string;
}

/**
 * ShareGPT conversations from a local JSON file. Each conversation gives one request: its first human turn as the
 * prompt, and the length of the next gpt turn as the output length (or `sharegptOutputLen` for all). As in SGLang's
 * bench_serving, conversations are shuffled (with the run's seed), pairs whose prompt or answer is shorter than 2
 * tokens are dropped, so are pairs longer than `sharegptContextLen` when it is set, and the first `numPrompts` that
 * remain are used; when fewer remain, all of them are. Lengths are counted with the word tokenizer (one word = one
 * token), so they match the simulated engine and approximate a real model's tokenizer; with `tokenizerPath` they are
 * counted with that tokenizer instead.
 */
export const loadShareGptDataset: DatasetLoader = async (settings, random) => {
  const count = requireWholeNumber('numPrompts', settings.numPrompts, 1);
  const fixedOutputLength =
    settings.sharegptOutputLen === undefined ? undefined : requireWholeNumber('sharegptOutputLen', settings.sharegptOutputLen, 4);
  const contextLength =
    settings.sharegptContextLen === undefined ? undefined : requireWholeNumber('sharegptContextLen', settings.sharegptContextLen, 2);
  const path = settings.datasetPath;
  if (path === undefined) {
    throw new ServelabError('INVALID_CONFIG', `the sharegpt dataset needs --dataset-path: ${SHAREGPT_FILE} (servelab never downloads datasets)`);
  }

  const tokenizer = settings.tokenizerPath === undefined ? undefined : await loadTokenizer(settings.tokenizerPath);
  const countTokens = (text: string): number => (tokenizer === undefined ? countWordTokens(text) : tokenizer.countTokens(text));

  const pairs: Pair[] = [];
  try {
    await readJsonArrayElements(path, (element, index, lineNumber) => {
      const pair = pairFromConversation(element, index, lineNumber, path);
      if (pair !== undefined) pairs.push(pair);
    });
  } catch (error) {
    if (error instanceof ServelabError) throw error;
    if (error instanceof JsonArrayFormatError) {
      throw new ServelabError('INVALID_DATASET', `dataset ${path}, line ${error.lineNumber}: ${error.message}; expected ${SHAREGPT_FILE}`);
    }
    throw datasetFileError(path, error, SHAREGPT_FILE);
  }

  random.shuffle(pairs);
  const requests: WorkloadRequest[] = [];
  for (const pair of pairs) {
    if (requests.length === count) break;
    const inputLength = countTokens(pair.prompt);
    const outputLength = fixedOutputLength ?? countTokens(pair.answer);
    if (inputLength < MIN_PAIR_TOKENS || outputLength < MIN_PAIR_TOKENS) continue;
    if (contextLength !== undefined && inputLength + outputLength > contextLength) continue;
    requests.push({ datasetIndex: requests.length, prompt: pair.prompt, inputLength, outputLength });
  }
  if (requests.length === 0) {
    throw new ServelabError(
      'INVALID_DATASET',
      `dataset ${path} has no usable conversation (${pairs.length} human/gpt pairs, none with at least ${MIN_PAIR_TOKENS} ` +
        'tokens on both sides within the context length); check that it is a ShareGPT-format file',
    );
  }
  return requests;
};

function pairFromConversation(element: unknown, index: number, lineNumber: number, path: string): Pair | undefined {
  const fail = (problem: string): never => {
    throw new ServelabError('INVALID_DATASET', `dataset ${path}, line ${lineNumber} (conversation ${index}): ${problem}; expected ${SHAREGPT_FILE}`);
  };
  if (typeof element !== 'object' || element === null || Array.isArray(element)) return fail('not a JSON object');
  const record = element as Record<string, unknown>;
  const turns = record['conversations'] ?? record['conversation'];
  if (turns === undefined) return fail('no "conversations" field');
  if (!Array.isArray(turns)) return fail('"conversations" is not an array');
  let questionIndex = -1;
  for (let turnIndex = 0; turnIndex < turns.length; turnIndex++) {
    const turn = turns[turnIndex] as unknown;
    if (typeof turn !== 'object' || turn === null) return fail(`turn ${turnIndex} is not an object`);
    const { from, value } = turn as Record<string, unknown>;
    if (typeof value !== 'string') return fail(`turn ${turnIndex} has no string "value"`);
    const role = typeof from === 'string' ? from.toLowerCase() : '';
    if (questionIndex < 0) {
      if (QUESTION_ROLES.has(role)) questionIndex = turnIndex;
    } else if (ANSWER_ROLES.has(role)) {
      return { prompt: ((turns[questionIndex] as Record<string, unknown>)['value'] as string), answer: value };
    }
  }
  return undefined; // fewer than two usable turns: skipped, as SGLang does
}
