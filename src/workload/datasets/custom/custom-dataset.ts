import { ServelabError } from '../../../errors/servelab-error.js';
import type { WorkloadRequest } from '../../../types/workload.js';
import { countWordTokens } from '../../../utils/word-tokenizer.js';
import type { DatasetLoader } from '../dataset-loader.js';
import { requireWholeNumber } from '../dataset-checks.js';
import { readDatasetLines } from '../dataset-lines.js';
import { datasetFileError } from '../file-errors.js';
import { lineFailure, parseJsonObjectLine } from '../json-line.js';
import { loadTokenizer } from '../../tokenizer/load-tokenizer.js';

const CUSTOM_FILE =
  'a JSONL file, one request a line: {"prompt": "...", "output_len": 128} with optional "timestamp" (s), "session_id", ' +
  '"prefix_group", or SGLang\'s {"conversations": [{"content": question}, {"content": answer}]}';

type ChatMessage = NonNullable<WorkloadRequest['messages']>[number];
const CHAT_ROLES = new Set(['system', 'user', 'assistant']);

/**
 * A custom JSONL workload, one request a line, in file order (SGLang shuffles its custom rows; servelab keeps the order
 * so that timestamps and sessions replay as written), the first `numPrompts` rows. A row is either
 * - servelab's form: `prompt` (text), `input_ids` (token ids) or `messages` (chat), an output length in `output_len`
 *   (also `output_length`, `max_tokens`, `max_new_tokens`; else `sharegptOutputLen`), and optionally `timestamp`
 *   (seconds) or `timestamp_ms`, `session_id`, `prefix_group`; or
 * - SGLang's form: `conversations` whose first turn's `content` (or `value`) is the prompt and whose second turn's
 *   length is the output length; such pairs shorter than 2 tokens on either side are dropped, as SGLang does.
 * A malformed line is an error naming the file, the line and the problem (SGLang skips bad lines silently).
 * Text lengths are counted in words (the simulated engine's tokens), or with the tokenizer of `tokenizerPath` when set.
 */
export const loadCustomDataset: DatasetLoader = async (settings) => {
  const count = requireWholeNumber('numPrompts', settings.numPrompts, 1);
  const path = settings.datasetPath;
  if (path === undefined) {
    throw new ServelabError('INVALID_CONFIG', `the custom dataset needs --dataset-path: ${CUSTOM_FILE}`);
  }
  const fixedOutputLength =
    settings.sharegptOutputLen === undefined ? undefined : requireWholeNumber('sharegptOutputLen', settings.sharegptOutputLen, 1);
  const tokenizer = settings.tokenizerPath === undefined ? undefined : await loadTokenizer(settings.tokenizerPath);
  const countTokens = (text: string): number => (tokenizer === undefined ? countWordTokens(text) : tokenizer.countTokens(text));
  const requests: WorkloadRequest[] = [];
  try {
    for await (const { text, lineNumber } of readDatasetLines(path)) {
      if (requests.length === count) break;
      const line = text.trim();
      if (line === '' || line.startsWith('#')) continue;
      const request = parseRow(line, lineNumber, path, fixedOutputLength, requests.length, countTokens);
      if (request !== undefined) requests.push(request);
    }
  } catch (error) {
    if (error instanceof ServelabError) throw error;
    throw datasetFileError(path, error, CUSTOM_FILE);
  }
  if (requests.length === 0) {
    throw new ServelabError('INVALID_DATASET', `dataset ${path} holds no request; expected ${CUSTOM_FILE}`);
  }
  return requests;
};

function parseRow(
  line: string,
  lineNumber: number,
  path: string,
  fixedOutputLength: number | undefined,
  datasetIndex: number,
  countTokens: (text: string) => number,
): WorkloadRequest | undefined {
  const fail = lineFailure(path, lineNumber, CUSTOM_FILE);
  const row = parseJsonObjectLine(line, fail);

  const turns = row['conversations'] ?? row['conversation'];
  if (turns !== undefined) {
    if (!Array.isArray(turns)) return fail('"conversations" is not an array');
    if (turns.length < 2) return undefined;
    const [question, answer] = turns.slice(0, 2).map((turn: unknown, turnIndex) => {
      const fields = (typeof turn === 'object' && turn !== null ? turn : {}) as Record<string, unknown>;
      const text = fields['content'] ?? fields['value'];
      return typeof text === 'string' ? text : fail(`turn ${turnIndex} has no string "content" or "value"`);
    }) as [string, string];
    const inputLength = countTokens(question);
    const outputLength = fixedOutputLength ?? countTokens(answer);
    if (inputLength < 2 || outputLength < 2) return undefined;
    return { datasetIndex, prompt: question, inputLength, outputLength };
  }

  const request: WorkloadRequest = { datasetIndex, inputLength: 0, outputLength: 0 };
  const prompt = row['prompt'] ?? row['text'];
  const inputIds = row['input_ids'] ?? row['inputIds'];
  const messages = row['messages'];
  const given = [prompt, inputIds, messages].filter((value) => value !== undefined).length;
  if (given !== 1) fail('give exactly one of "prompt", "input_ids" and "messages"');
  if (prompt !== undefined) {
    if (typeof prompt !== 'string' || prompt.length === 0) fail('"prompt" must be a non-empty string');
    request.prompt = prompt as string;
    request.inputLength = countTokens(prompt as string);
  } else if (inputIds !== undefined) {
    if (!Array.isArray(inputIds) || inputIds.length === 0 || !inputIds.every((id) => Number.isInteger(id) && (id as number) >= 0)) {
      fail('"input_ids" must be a non-empty array of token ids (whole numbers of at least 0)');
    }
    request.inputIds = inputIds as number[];
    request.inputLength = (inputIds as number[]).length;
  } else {
    if (!Array.isArray(messages) || messages.length === 0) fail('"messages" must be a non-empty array');
    request.messages = (messages as unknown[]).map((message, messageIndex) => {
      const fields = (typeof message === 'object' && message !== null ? message : {}) as Record<string, unknown>;
      if (typeof fields['role'] !== 'string' || !CHAT_ROLES.has(fields['role']) || typeof fields['content'] !== 'string') {
        fail(`message ${messageIndex} needs a "role" (system, user or assistant) and a string "content"`);
      }
      return { role: fields['role'], content: fields['content'] } as ChatMessage;
    });
    request.inputLength = request.messages.reduce((sum, message) => sum + countTokens(message.content), 0);
  }

  const outputField = ['output_len', 'output_length', 'outputLength', 'max_tokens', 'max_new_tokens'].find((name) => row[name] !== undefined);
  const outputLength = fixedOutputLength ?? (outputField === undefined ? undefined : row[outputField]);
  if (outputLength === undefined) fail('no output length: add "output_len" to the row or set sharegptOutputLen for every row');
  if (!Number.isInteger(outputLength) || (outputLength as number) < 1) fail(`"${outputField}" must be a whole number of at least 1`);
  request.outputLength = outputLength as number;

  const timestamp = row['timestamp'];
  const timestampMs = row['timestamp_ms'];
  if (timestamp !== undefined) {
    if (typeof timestamp !== 'number' || !Number.isFinite(timestamp)) fail('"timestamp" must be a number of seconds');
    request.timestampS = timestamp as number;
  } else if (timestampMs !== undefined) {
    if (typeof timestampMs !== 'number' || !Number.isFinite(timestampMs)) fail('"timestamp_ms" must be a number of milliseconds');
    request.timestampS = (timestampMs as number) / 1000;
  }
  const sessionId = row['session_id'] ?? row['sessionId'];
  if (sessionId !== undefined) {
    if (typeof sessionId !== 'string' && typeof sessionId !== 'number') fail('"session_id" must be a string or a number');
    request.sessionId = String(sessionId);
  }
  const prefixGroup = row['prefix_group'] ?? row['prefixGroup'];
  if (prefixGroup !== undefined) {
    if (!Number.isInteger(prefixGroup)) fail('"prefix_group" must be a whole number');
    request.prefixGroup = prefixGroup as number;
  }
  return request;
}
