import { ServelabError } from '../../../errors/servelab-error.js';
import type { WorkloadRequest } from '../../../types/workload.js';
import { countWordTokens } from '../../../utils/word-tokenizer.js';
import type { DatasetLoader } from '../dataset-loader.js';
import { requireWholeNumber } from '../dataset-checks.js';
import { readDatasetLines } from '../dataset-lines.js';
import { datasetFileError } from '../file-errors.js';
import { lineFailure, parseJsonObjectLine } from '../json-line.js';
import { loadTokenizer } from '../../tokenizer/load-tokenizer.js';

const MOONCAKE_FILE =
  'a Mooncake trace: JSONL, one request a line, {"timestamp": ms, "input_length": n, "output_length": n, "hash_ids": [ids]}';
/** SGLang's prompt filler per hash id (python/sglang/benchmark/datasets/mooncake.py): the id, then "hi" 128 times. */
const FILLER_WORDS_PER_HASH_ID = 128;
const FILLER = new Array<string>(FILLER_WORDS_PER_HASH_ID).fill('hi').join(' ');
/** SGLang's default output length for a record without one. */
const DEFAULT_OUTPUT_LENGTH = 256;

interface MooncakeRecord {
  timestampMs: number;
  outputLength: number;
  hashIds: number[];
}

/**
 * A local Mooncake trace replayed as SGLang's benchmark builds it (--dataset-name mooncake): records sorted by
 * timestamp, the first `numPrompts`; each is a session of `mooncakeNumRounds` rounds. The user query is built from the
 * record's hash ids (each id directly followed by "hi" 128 times, then "Tell me a story based on this context."), so records
 * sharing leading hash ids share a prompt prefix, which is what the trace encodes; the trace's `input_length` is not
 * used for the prompt, as in SGLang. Round r's prompt is the conversation so far ("user: Round r: ..." lines with a
 * placeholder "assistant: story story ..." answer of the output length between rounds; SGLang's text when no chat
 * template applies). Every round carries the record's timestamp (seconds, `timestampS`): with `--arrival trace` and
 * no trace file the rounds of a session go out together at the trace's instants, as SGLang sends them; scale time
 * with --trace-time-scale (SGLang's --mooncake-slowdown-factor). Nothing is downloaded: `datasetPath` must be local.
 */
export const loadMooncakeDataset: DatasetLoader = async (settings) => {
  const count = requireWholeNumber('numPrompts', settings.numPrompts, 1);
  const rounds = requireWholeNumber('mooncakeNumRounds', settings.mooncakeNumRounds ?? 1, 1);
  const path = settings.datasetPath;
  if (path === undefined) throw new ServelabError('INVALID_CONFIG', `the mooncake dataset needs --dataset-path: ${MOONCAKE_FILE} (servelab never downloads traces)`);
  const tokenizer = settings.tokenizerPath === undefined ? undefined : await loadTokenizer(settings.tokenizerPath);
  const countTokens = (text: string): number => (tokenizer === undefined ? countWordTokens(text) : tokenizer.countTokens(text));
  const records: MooncakeRecord[] = [];
  try {
    for await (const { text, lineNumber } of readDatasetLines(path)) {
      const line = text.trim();
      if (line === '') continue;
      records.push(parseRecord(line, lineNumber, path));
    }
  } catch (error) {
    if (error instanceof ServelabError) throw error;
    throw datasetFileError(path, error, MOONCAKE_FILE);
  }
  if (records.length === 0) throw new ServelabError('INVALID_DATASET', `dataset ${path} holds no record; expected ${MOONCAKE_FILE}`);
  // SGLang takes the first numPrompts lines, then replays them in timestamp order.
  const chosen = records.slice(0, count).sort((left, right) => left.timestampMs - right.timestampMs);
  const requests: WorkloadRequest[] = [];
  chosen.forEach((record, session) => {
    let query = '';
    // SGLang's exact text: each id immediately followed by "hi hi ... hi", blocks not separated.
    for (const hashId of record.hashIds) query += `${hashId}${FILLER}`;
    query += 'Tell me a story based on this context.';
    const history: string[] = [];
    for (let round = 0; round < rounds; round++) {
      history.push(`user: Round ${round + 1}: ${query}`);
      const prompt = history.join('\n');
      requests.push({
        datasetIndex: requests.length,
        prompt,
        inputLength: countTokens(prompt),
        outputLength: record.outputLength,
        timestampS: record.timestampMs / 1000,
        sessionId: `mooncake-${session}`,
      });
      history.push(`assistant: ${'story '.repeat(record.outputLength).trimEnd()}`);
    }
  });
  return requests;
};

function parseRecord(line: string, lineNumber: number, path: string): MooncakeRecord {
  const fail = lineFailure(path, lineNumber, MOONCAKE_FILE);
  const row = parseJsonObjectLine(line, fail);
  const timestamp = row['timestamp'];
  if (typeof timestamp !== 'number' || !Number.isFinite(timestamp)) return fail('"timestamp" (milliseconds) is missing or not a number');
  const output = row['output_length'] ?? DEFAULT_OUTPUT_LENGTH;
  if (typeof output !== 'number' || !Number.isInteger(output) || output < 1) return fail('"output_length" must be a whole number ≥ 1');
  const hashIds = row['hash_ids'] ?? [];
  if (!Array.isArray(hashIds) || !hashIds.every((id) => typeof id === 'number' && Number.isInteger(id))) return fail('"hash_ids" must be a list of whole numbers');
  return { timestampMs: timestamp, outputLength: output, hashIds: hashIds as number[] };
}
