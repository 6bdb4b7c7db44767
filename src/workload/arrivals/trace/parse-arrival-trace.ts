import { ServelabError } from '../../../errors/servelab-error.js';

/**
 * Reads arrival timestamps from a trace's text. One arrival a line; blank lines and lines starting with `#` are skipped.
 * A line is either a bare number (seconds), a CSV row whose first field is a number in seconds (a header row is allowed
 * on the first line), or a JSON object with `timestamp` (seconds) or `timestamp_ms` / `timestampMs` (milliseconds).
 * Timestamps may be absolute (epoch) or relative: the schedule starts at the first one. Returns milliseconds, in file order,
 * and rejects a timestamp earlier than the one before it, naming the line.
 */
export function parseArrivalTrace(text: string, sourceName: string): Float64Array {
  const timestampsMs: number[] = [];
  const lines = text.split('\n');
  for (let lineIndex = 0; lineIndex < lines.length; lineIndex++) {
    const line = (lines[lineIndex] as string).trim();
    if (line === '' || line.startsWith('#')) continue;
    const lineNumber = lineIndex + 1;
    const fail = (problem: string): never => {
      throw new ServelabError(
        'INVALID_DATASET',
        `trace ${sourceName}, line ${lineNumber}: ${problem}; each line must hold one arrival time: a number of seconds, ` +
          'a CSV row starting with one, or a JSON object with "timestamp" (seconds) or "timestamp_ms"',
      );
    };
    let milliseconds: number;
    if (line.startsWith('{')) {
      let row: unknown;
      try {
        row = JSON.parse(line);
      } catch {
        return fail('not valid JSON');
      }
      const fields = row as Record<string, unknown>;
      if (typeof fields['timestamp'] === 'number') milliseconds = fields['timestamp'] * 1000;
      else if (typeof fields['timestamp_ms'] === 'number') milliseconds = fields['timestamp_ms'];
      else if (typeof fields['timestampMs'] === 'number') milliseconds = fields['timestampMs'];
      else return fail('the JSON object has no numeric "timestamp" or "timestamp_ms" field');
    } else {
      const firstField = (line.split(/[,\t]/)[0] as string).trim();
      milliseconds = Number(firstField) * 1000;
      if (firstField === '' || Number.isNaN(milliseconds)) {
        if (timestampsMs.length === 0 && /[A-Za-z]/.test(firstField)) continue; // a CSV header
        return fail(`"${firstField.slice(0, 40)}" is not a number`);
      }
    }
    if (!Number.isFinite(milliseconds)) fail('the timestamp is not a finite number');
    const previousMs = timestampsMs[timestampsMs.length - 1];
    if (previousMs !== undefined && milliseconds < previousMs) {
      fail(`the timestamp is earlier than the previous one (by ${previousMs - milliseconds} ms); sort the trace by time`);
    }
    timestampsMs.push(milliseconds);
  }
  if (timestampsMs.length === 0) {
    throw new ServelabError('INVALID_DATASET', `trace ${sourceName} holds no arrival times; give a file with one timestamp a line`);
  }
  return Float64Array.from(timestampsMs);
}
