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

/** The default cap on one event's bytes (its lines together); see `SseParserOptions.maxEventBytes`. */
export const DEFAULT_MAX_SSE_EVENT_BYTES = 32 * 1024 * 1024;

export interface SseParserOptions {
  /**
   * The most bytes one event may hold (its field lines together, line ends excluded). Past it the parser stops and
   * `push` returns false: a hostile or broken server cannot make the client hold an unbounded line.
   */
  maxEventBytes?: number;
}

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
  readonly #maxEventBytes: number;
  /**
   * The pieces of a line whose end has not arrived yet, each copied once. They are joined only when the line ends, so a
   * line split over many chunks costs time linear in its bytes (re-joining the pending line on every chunk was
   * quadratic: a 10 MB line in 64 KiB chunks copied about 800 MB).
   */
  #pendingPieces: Buffer[] = [];
  #pendingBytes = 0;
  /** Bytes of the current event's complete lines so far. */
  #eventBytes = 0;
  #overflowed = false;
  /** Data lines of the event being read; undefined until its first `data:` line. */
  #data: string | undefined = undefined;
  #eventType: string | undefined = undefined;
  /** True when any field line of the current event was read (to tell a truncated event from a clean end). */
  #eventStarted = false;

  constructor(listener: SseEventListener, options: SseParserOptions = {}) {
    this.#listener = listener;
    this.#maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_SSE_EVENT_BYTES;
  }

  /**
   * Feeds the next chunk of the body. Complete events are delivered to the listener before this returns. Returns false
   * when an event grew past `maxEventBytes`; the parser then ignores everything after.
   */
  push(chunk: Uint8Array): boolean {
    if (this.#overflowed) return false;
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const length = buffer.length;
    let lineStart = 0;
    if (this.#pendingBytes > 0) {
      const lineFeed = buffer.indexOf(LINE_FEED);
      if (lineFeed < 0) return this.#keepPending(buffer, 0);
      // The pending line ends in this chunk: join its pieces once.
      this.#pendingPieces.push(buffer.subarray(0, lineFeed));
      const line = Buffer.concat(this.#pendingPieces, this.#pendingBytes + lineFeed);
      this.#pendingPieces = [];
      this.#pendingBytes = 0;
      let lineEnd = line.length;
      if (lineEnd > 0 && line[lineEnd - 1] === CARRIAGE_RETURN) lineEnd--;
      if (!this.#countLine(line, 0, lineEnd)) return false;
      this.#readLine(line, 0, lineEnd);
      lineStart = lineFeed + 1;
    }
    while (lineStart < length) {
      const lineFeed = buffer.indexOf(LINE_FEED, lineStart);
      if (lineFeed < 0) return this.#keepPending(buffer, lineStart);
      let lineEnd = lineFeed;
      if (lineEnd > lineStart && buffer[lineEnd - 1] === CARRIAGE_RETURN) lineEnd--;
      if (!this.#countLine(buffer, lineStart, lineEnd)) return false;
      this.#readLine(buffer, lineStart, lineEnd);
      lineStart = lineFeed + 1;
    }
    return true;
  }

  /** Bytes held for the line and event being read (what the cap bounds). */
  get heldBytes(): number {
    return this.#pendingBytes + this.#eventBytes;
  }

  #keepPending(buffer: Buffer, start: number): boolean {
    const bytes = buffer.length - start;
    if (this.#eventBytes + this.#pendingBytes + bytes > this.#maxEventBytes) return this.#overflow();
    // Copy, because the caller may reuse the chunk's memory once push returns.
    this.#pendingPieces.push(Buffer.from(buffer.subarray(start)));
    this.#pendingBytes += bytes;
    return true;
  }

  /**
   * Counts one complete line towards its event's size; false (and the parser stops) past the cap. Comments are not
   * kept, so they do not count (keep-alive pings between events would otherwise add up).
   */
  #countLine(buffer: Buffer, start: number, end: number): boolean {
    if (end === start) {
      this.#eventBytes = 0;
      return true;
    }
    if (buffer[start] === COLON) return true;
    this.#eventBytes += end - start;
    return this.#eventBytes <= this.#maxEventBytes || this.#overflow();
  }

  #overflow(): false {
    this.#overflowed = true;
    this.#pendingPieces = [];
    this.#pendingBytes = 0;
    this.#eventBytes = 0;
    this.#data = undefined;
    return false;
  }

  /**
   * Marks the end of the body. Returns true when the body ended inside an event (a line or event without its closing
   * blank line), which per the event-stream rules is discarded, never delivered.
   */
  end(): boolean {
    const truncated = this.#pendingBytes > 0 || this.#eventStarted;
    this.#pendingPieces = [];
    this.#pendingBytes = 0;
    this.#eventBytes = 0;
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
