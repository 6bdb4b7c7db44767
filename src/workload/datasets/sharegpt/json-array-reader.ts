import { createReadStream } from 'node:fs';

/** Where a malformed element sits, for error messages. */
export class JsonArrayFormatError extends Error {
  readonly lineNumber: number;
  constructor(message: string, lineNumber: number) {
    super(message);
    this.lineNumber = lineNumber;
  }
}

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const NEWLINE = 0x0a;

function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === NEWLINE || byte === 0x0d || byte === 0x09;
}

/**
 * Reads a file holding one top-level JSON array and hands each element, parsed, to `onElement` with its 0-based index
 * and the line it starts on. The file is scanned in chunks and each element parsed on its own, because the full
 * ShareGPT file (~670 MB) is longer than the longest string V8 can hold, so `JSON.parse` of the whole file is impossible.
 * Structural characters are ASCII and never occur inside a multi-byte UTF-8 sequence, so scanning bytes is safe.
 */
export async function readJsonArrayElements(
  path: string,
  onElement: (element: unknown, index: number, lineNumber: number) => void,
): Promise<number> {
  let lineNumber = 1;
  let state: 'before-array' | 'between' | 'in-element' | 'after-array' = 'before-array';
  let expectComma = false;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let elementPieces: Buffer[] = [];
  let elementStartLine = 0;
  let elementIndex = 0;

  // Strict: invalid bytes are an error naming the element's line, never U+FFFD slipped into a prompt.
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const finishElement = (): void => {
    let text: string;
    try {
      text = utf8.decode(Buffer.concat(elementPieces));
    } catch {
      throw new JsonArrayFormatError(`element ${elementIndex} is not valid UTF-8; save the file as UTF-8`, elementStartLine);
    }
    elementPieces = [];
    let element: unknown;
    try {
      element = JSON.parse(text);
    } catch (error) {
      throw new JsonArrayFormatError(
        `element ${elementIndex} is not valid JSON (${error instanceof Error ? error.message : String(error)})`,
        elementStartLine,
      );
    }
    onElement(element, elementIndex, elementStartLine);
    elementIndex++;
    expectComma = true;
    state = 'between';
  };

  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    let elementStart = state === 'in-element' ? 0 : -1;
    for (let position = 0; position < chunk.length; position++) {
      const byte = chunk[position] as number;
      if (state === 'in-element') {
        if (inString) {
          if (escaped) escaped = false;
          else if (byte === BACKSLASH) escaped = true;
          else if (byte === QUOTE) inString = false;
          else if (byte === NEWLINE) lineNumber++;
          if (!inString && depth === 0) {
            elementPieces.push(chunk.subarray(elementStart, position + 1));
            finishElement();
          }
          continue;
        }
        if (byte === QUOTE) inString = true;
        else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
        else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
          if (depth === 0) {
            if (byte === CLOSE_BRACE) throw new JsonArrayFormatError(`element ${elementIndex} has a stray "}"`, lineNumber);
            // A bare value (number, true, null) ended by the array's closing bracket.
            elementPieces.push(chunk.subarray(elementStart, position));
            finishElement();
            state = 'after-array';
            continue;
          }
          depth--;
          if (depth === 0) {
            elementPieces.push(chunk.subarray(elementStart, position + 1));
            finishElement();
          }
        } else if (depth === 0 && (byte === COMMA || isWhitespace(byte))) {
          elementPieces.push(chunk.subarray(elementStart, position));
          finishElement();
          if (byte === COMMA) expectComma = false;
        }
        if (byte === NEWLINE) lineNumber++;
        continue;
      }
      if (byte === NEWLINE) lineNumber++;
      if (isWhitespace(byte)) continue;
      if (state === 'before-array') {
        if (byte === 0xef || byte === 0xbb || byte === 0xbf) continue; // a UTF-8 byte-order mark
        if (byte !== OPEN_BRACKET) throw new JsonArrayFormatError('the file does not start with a JSON array "["', lineNumber);
        state = 'between';
        continue;
      }
      if (state === 'after-array') {
        throw new JsonArrayFormatError('unexpected content after the closing "]" of the array', lineNumber);
      }
      // state === 'between'
      if (byte === CLOSE_BRACKET) {
        state = 'after-array';
        continue;
      }
      if (byte === COMMA) {
        if (!expectComma) throw new JsonArrayFormatError('a comma where an element was expected', lineNumber);
        expectComma = false;
        continue;
      }
      if (expectComma) throw new JsonArrayFormatError(`a missing comma before element ${elementIndex}`, lineNumber);
      state = 'in-element';
      elementStart = position;
      elementStartLine = lineNumber;
      depth = 0;
      inString = false;
      escaped = false;
      if (byte === QUOTE) inString = true;
      else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth = 1;
    }
    if (state === 'in-element') elementPieces.push(chunk.subarray(elementStart));
  }
  if (state === 'before-array') throw new JsonArrayFormatError('the file is empty; it should hold a JSON array', lineNumber);
  if ((state as string) !== 'after-array') throw new JsonArrayFormatError('the file ends before the array\'s closing "]"', lineNumber);
  return elementIndex;
}
