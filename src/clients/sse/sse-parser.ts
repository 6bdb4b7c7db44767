/**
 * Called once per complete server-sent event. `data` is the event's data lines joined by `\n`; `eventType` is the
 * `event:` field, or `message` when the event has none.
 */
export type SseEventListener = (data: string, eventType: string) => void;

const LINE_FEED = 10;
const CARRIAGE_RETURN = 13;
const COLON = 58;
const SPACE = 32;
const LETTER_D = 100;
const LETTER_A = 97;
const LETTER_T = 116;

/**
 * An incremental parser for `text/event-stream` bodies: bytes in, events out.
 *
 * It is on the hot path of every streamed request, so it works on the raw bytes: it finds line ends with
 * `Buffer.indexOf`, decodes only the value of each `data:` line, and copies bytes only when a line is split across two
 * network chunks (the only case where a partial line must be kept). Events split across chunks, several events in one
 * chunk, `\r\n` line ends, comments (`:` lines) and multi-line data all follow the WHATWG event-stream rules. `id` and
 * `retry` fields are read past (a measuring client never reconnects). A bare `\r` line end (no LLM server sends one)
 * is not treated as a line end.
 */
export class SseParser {
  readonly #listener: SseEventListener;
  /** The start of a line whose end has not arrived yet. */
  #pendingLine: Buffer | undefined = undefined;
  /** Data lines of the event being read; undefined until its first `data:` line. */
  #data: string | undefined = undefined;
  #eventType: string | undefined = undefined;
  /** True when any field line of the current event was read (to tell a truncated event from a clean end). */
  #eventStarted = false;

  constructor(listener: SseEventListener) {
    this.#listener = listener;
  }

  /** Feeds the next chunk of the body. Complete events are delivered to the listener before this returns. */
  push(chunk: Uint8Array): void {
    let buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.#pendingLine !== undefined) {
      buffer = Buffer.concat([this.#pendingLine, buffer]);
      this.#pendingLine = undefined;
    }
    const length = buffer.length;
    let lineStart = 0;
    while (lineStart < length) {
      const lineFeed = buffer.indexOf(LINE_FEED, lineStart);
      if (lineFeed < 0) {
        // Copy, because the caller may reuse the chunk's memory once push returns.
        this.#pendingLine = Buffer.from(buffer.subarray(lineStart));
        return;
      }
      let lineEnd = lineFeed;
      if (lineEnd > lineStart && buffer[lineEnd - 1] === CARRIAGE_RETURN) lineEnd--;
      this.#readLine(buffer, lineStart, lineEnd);
      lineStart = lineFeed + 1;
    }
  }

  /**
   * Marks the end of the body. Returns true when the body ended inside an event (a line or event without its closing
   * blank line), which per the event-stream rules is discarded, never delivered.
   */
  end(): boolean {
    const truncated = this.#pendingLine !== undefined || this.#eventStarted;
    this.#pendingLine = undefined;
    this.#data = undefined;
    this.#eventType = undefined;
    this.#eventStarted = false;
    return truncated;
  }

  #readLine(buffer: Buffer, start: number, end: number): void {
    if (end === start) {
      this.#dispatch();
      return;
    }
    const first = buffer[start];
    if (first === COLON) return; // a comment, such as a keep-alive ping
    this.#eventStarted = true;
    // Fast path for the one field an LLM stream uses: `data:`.
    if (
      first === LETTER_D &&
      end - start >= 5 &&
      buffer[start + 1] === LETTER_A &&
      buffer[start + 2] === LETTER_T &&
      buffer[start + 3] === LETTER_A &&
      buffer[start + 4] === COLON
    ) {
      let valueStart = start + 5;
      if (valueStart < end && buffer[valueStart] === SPACE) valueStart++;
      this.#appendData(buffer.toString('utf8', valueStart, end));
      return;
    }
    const colon = buffer.indexOf(COLON, start);
    let field: string;
    let value: string;
    if (colon < 0 || colon >= end) {
      field = buffer.toString('utf8', start, end);
      value = '';
    } else {
      field = buffer.toString('utf8', start, colon);
      let valueStart = colon + 1;
      if (valueStart < end && buffer[valueStart] === SPACE) valueStart++;
      value = buffer.toString('utf8', valueStart, end);
    }
    if (field === 'data') this.#appendData(value);
    else if (field === 'event') this.#eventType = value;
    // `id`, `retry` and unknown fields are ignored, as the rules allow.
  }

  #appendData(value: string): void {
    this.#data = this.#data === undefined ? value : `${this.#data}\n${value}`;
  }

  #dispatch(): void {
    const data = this.#data;
    const eventType = this.#eventType;
    this.#data = undefined;
    this.#eventType = undefined;
    this.#eventStarted = false;
    // An event whose data is empty is not delivered (WHATWG rule).
    if (data === undefined || data === '') return;
    this.#listener(data, eventType ?? 'message');
  }
}
