import { getHeapStatistics } from 'node:v8';
import { ServelabError } from '../errors/servelab-error.js';

/** The largest length of a JavaScript array: one element per request cannot go beyond it. */
const MAX_ARRAY_LENGTH = 2 ** 32 - 1;
/**
 * "Far beyond" the process can hold: the estimate below is generous (records stored compactly, or streamed to disk,
 * need less), so only settings this many times over the heap limit are refused before the run; anything nearer is
 * left to try.
 */
const REFUSAL_FACTOR = 4;

export interface CapacitySettings {
  numPrompts: number;
  datasetName: string;
  randomInputLen: number;
  randomOutputLen: number;
  gspSystemPromptLen?: number;
  gspQuestionLen?: number;
  gspOutputLen?: number;
  concurrency?: number;
}

/**
 * Bytes one request costs in memory, roughly: its record and workload entry (~1 KB), its per-token gaps (8 bytes per
 * output token), its prompt (about 4 bytes per input token as text, 8 as token ids).
 */
export function estimateRunBytes(settings: CapacitySettings): number {
  const sharedPrefix = settings.datasetName === 'shared-prefix';
  const inputTokens = sharedPrefix ? (settings.gspSystemPromptLen ?? 0) + (settings.gspQuestionLen ?? 0) : settings.randomInputLen;
  const outputTokens = sharedPrefix ? (settings.gspOutputLen ?? 0) : settings.randomOutputLen;
  return settings.numPrompts * (1024 + 8 * outputTokens + 6 * inputTokens);
}

/**
 * Refuses, in one line naming the setting and the fix, settings far beyond what this process can hold: without this
 * check they end in a V8 abort ("Fatal JavaScript invalid size error", "heap out of memory") with no run directory
 * worth keeping.
 */
export function checkMachineCapacity(settings: CapacitySettings, heapLimitBytes = getHeapStatistics().heap_size_limit): void {
  if (settings.numPrompts > MAX_ARRAY_LENGTH) {
    throw new ServelabError('INVALID_CONFIG', `numPrompts (--num-prompts) ${settings.numPrompts} is beyond the ${MAX_ARRAY_LENGTH} requests one run can hold; split the load into several runs`);
  }
  if (settings.concurrency !== undefined && settings.concurrency > MAX_ARRAY_LENGTH) {
    throw new ServelabError('INVALID_CONFIG', `concurrency (--concurrency) ${settings.concurrency} is beyond the ${MAX_ARRAY_LENGTH} users one run can hold`);
  }
  const bytes = estimateRunBytes(settings);
  if (bytes > REFUSAL_FACTOR * heapLimitBytes) {
    const gib = (value: number): string => (value / 2 ** 30).toFixed(value < 10 * 2 ** 30 ? 1 : 0);
    throw new ServelabError(
      'INVALID_CONFIG',
      `numPrompts (--num-prompts) ${settings.numPrompts} with these lengths needs about ${gib(bytes)} GiB of memory; this process may hold ${gib(heapLimitBytes)} GiB ` +
        '(the V8 heap limit): lower --num-prompts or the lengths, split the load into several runs, or raise the limit with NODE_OPTIONS=--max-old-space-size=<MiB>',
    );
  }
}
