const FINISH_REASON_NULL = '"finish_reason":null';
const COMPLETION_TOKENS = '"completion_tokens":';

/** Where the keys the scan reads were in the previous event of a stream, relative to the search start; -1 unknown. */
export interface KeyPositions {
  finishReason: number;
  completionTokens: number;
}

/** `key` at `fromIndex + offset` if it is there, else the first one from `fromIndex`; -1 when there is none. */
function findKey(data: string, key: string, fromIndex: number, offset: number | undefined): number {
  if (offset !== undefined && offset >= 0 && data.startsWith(key, fromIndex + offset)) return fromIndex + offset;
  return data.indexOf(key, fromIndex);
}

/**
 * A fast reading of the one thing a mid-stream SGLang event tells: its cumulative `completion_tokens`.
 *
 * Why: SGLang's `text` is cumulative, so parsing every whole event costs O(n²) in the output length, on the measuring
 * client's one core (its CPU per request: bench/node-cli-targets.ts; this scan's own share is not measured there apart).
 * Mid-stream events
 * (after the first token, before the final one) carry nothing else the client needs: the server timing keys are read
 * from the first token-carrying event and the final event, which are always parsed in full.
 *
 * Why it is safe to search the raw text: inside a JSON string every `"` is escaped as `\"`, so the sequences
 * `"finish_reason":null` and `"completion_tokens":` can only be real keys, never generated text; and no other object
 * in an SGLang event (text, output_ids, logprob lists) has keys of those names. Anything unexpected (finish_reason not
 * null, no count, not an object) returns -1 and the caller parses the event in full, which also reports malformed
 * JSON. Two forward `indexOf` searches only: `lastIndexOf` is several times slower in V8.
 *
 * `fromIndex` lets a caller that knows where `meta_info` starts (see `findMetaInfo`) skip the generated text, which
 * grows with every event; a key can only be a real key wherever the search starts, for the reason above. With
 * `remembered`, each key is first looked for exactly where it was in the previous event (relative to `fromIndex`),
 * since meta_info keeps its layout from event to event, and the positions found are stored back: a string search
 * for keys that start with `"` runs through every quote of the JSON, which was a visible share of the client's CPU.
 */
export function scanMidStreamCompletionTokens(data: string, fromIndex = 0, remembered?: KeyPositions): number {
  const length = data.length;
  if (length < 2 || data.charCodeAt(0) !== 123 || data.charCodeAt(length - 1) !== 125) return -1; // '{' ... '}'
  const finishReason = findKey(data, FINISH_REASON_NULL, fromIndex, remembered?.finishReason);
  if (finishReason < 0) return -1;
  const key = findKey(data, COMPLETION_TOKENS, fromIndex, remembered?.completionTokens);
  if (key < 0) return -1;
  if (remembered !== undefined) {
    remembered.finishReason = finishReason - fromIndex;
    remembered.completionTokens = key - fromIndex;
  }
  let cursor = key + COMPLETION_TOKENS.length;
  let value = 0;
  let digits = 0;
  for (; cursor < length; cursor++) {
    const code = data.charCodeAt(cursor);
    if (code < 48 || code > 57) break;
    value = value * 10 + (code - 48);
    digits++;
  }
  if (digits === 0) return -1;
  const next = data.charCodeAt(cursor);
  // The number must end where a JSON value ends (not e.g. 12.5 or 1e3).
  return next === 44 || next === 125 ? value : -1; // ',' or '}'
}

const META_INFO_KEY = '"meta_info":';
/** How much an event's `meta_info` may grow from one event to the next before the hinted search misses it. */
const META_INFO_SLACK_CHARS = 64;

/**
 * Where the `meta_info` key of an SGLang event starts, found by searching near where it ended up in the previous event
 * of the stream: `tailChars` is that event's length minus its key's position (undefined for the first event). The
 * text before `meta_info` grows with every event (it is cumulative), while `meta_info` itself barely changes, so
 * searching from `length - tailChars - slack` skips the text; a miss falls back to searching from the start, so the
 * hint only ever saves time. Returns -1 when the event has no such key.
 */
export function findMetaInfo(data: string, tailChars: number | undefined): number {
  if (tailChars !== undefined) {
    const unchanged = data.length - tailChars;
    if (unchanged >= 0 && data.startsWith(META_INFO_KEY, unchanged)) return unchanged;
    const hinted = data.indexOf(META_INFO_KEY, Math.max(0, data.length - tailChars - META_INFO_SLACK_CHARS));
    if (hinted >= 0) return hinted;
  }
  return data.indexOf(META_INFO_KEY);
}
