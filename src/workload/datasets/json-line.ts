import { ServelabError } from '../../errors/servelab-error.js';

/** A failure on one line of a JSONL dataset: names the file, the line, the problem and the expected format. */
export type LineFailure = (problem: string) => never;

export function lineFailure(path: string, lineNumber: number, expected: string): LineFailure {
  return (problem) => {
    throw new ServelabError('INVALID_DATASET', `dataset ${path}, line ${lineNumber}: ${problem}; expected ${expected}`);
  };
}

/** One JSONL line parsed as a JSON object, or a failure naming the line. */
export function parseJsonObjectLine(line: string, fail: LineFailure): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (error) {
    return fail(`not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return fail('not a JSON object');
  return parsed as Record<string, unknown>;
}
