import type { RunData } from '../../src/types/run.js';

/** The notices a run wrote into summary.json's extras (none: an empty list). */
export function noticesOf(result: { run: RunData }): string[] {
  return (result.run.extras?.notices ?? []) as string[];
}

/** Each record's TTFT from its scheduled time (seconds), undefined where it had no first token. */
export function ttftsOf(result: { run: RunData }): (number | undefined)[] {
  return result.run.records.map((record) => (record.firstTokenTime === undefined ? undefined : record.firstTokenTime - record.scheduledTime));
}
