import type { Clock } from '../../clock/clock.js';
import type { ClientOutcome, ErrorClass } from '../../types/record.js';
import type { Milliseconds } from '../../types/time.js';

/** Why a response body made a request fail. */
export interface DecodeFailure {
  error: ErrorClass;
  message: string;
}

/**
 * The protocol-specific half of a request: reads a 2xx response body. The transport half (`HttpExchange`) owns the
 * socket, deadlines, clock readings and error classes, and calls one decoder per request.
 */
export interface ResponseDecoder {
  /** True once the body said it is finished (a final chunk or `[DONE]`); a stream that ends before is truncated. */
  readonly complete: boolean;
  /** One server-sent event's data, received at `nowMs` (monotonic). Returns a failure to stop the request. */
  onEvent(data: string, nowMs: Milliseconds): DecodeFailure | undefined;
  /** The whole body of a non-streaming answer, received completely at `nowMs`. */
  onBody(text: string, nowMs: Milliseconds): DecodeFailure | undefined;
  /** Copies what the body told into the outcome (also after a failure: partial measurements are kept). */
  fill(outcome: ClientOutcome, clock: Clock): void;
}

export function malformed(message: string): DecodeFailure {
  return { error: 'malformed_stream', message: truncateMessage(message) };
}

export function serverError(message: string): DecodeFailure {
  return { error: 'server_error', message: truncateMessage(message) };
}

export const MAX_ERROR_MESSAGE_CHARS = 300;

/**
 * The most characters of a `finish_reason` kept in a record. Every value a server really sends is a short word
 * (SGLang: `stop`, `length`, `abort`; OpenAI: `stop`, `length`, `tool_calls`, `content_filter`); a server that sent
 * megabytes there would otherwise have them stored once per request, in memory and in every file of the run.
 */
export const MAX_FINISH_REASON_CHARS = 64;

export function truncateMessage(message: string): string {
  return capServerText(message, MAX_ERROR_MESSAGE_CHARS);
}

/**
 * Server text as a record may store it: at most `maxChars` characters, in a string of its own. The copy matters: V8
 * makes `slice` of a long string a view that keeps the whole original alive, so 300 characters sliced from a 30 MB
 * event would hold the 30 MB for as long as the record lives. Text within the cap is returned as it is.
 */
export function capServerText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return Buffer.from(text.slice(0, maxChars), 'utf16le').toString('utf16le');
}

/** A number read from a parsed JSON field, or undefined when the field is absent or not a finite number. */
export function readNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/**
 * The message of an error object as servers write them: `{"error": {"message": ...}}` (SGLang `/generate`, OpenAI),
 * `{"error": "..."}`, `{"object": "error", "message": ...}` (SGLang and vLLM OpenAI-compatible) or FastAPI's
 * `{"detail": ...}`. Returns undefined when the value carries no recognisable error.
 */
export function errorMessageOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const error = record['error'];
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null) {
    const message = (error as Record<string, unknown>)['message'];
    return typeof message === 'string' ? message : JSON.stringify(error);
  }
  if (record['object'] === 'error') {
    const message = record['message'];
    return typeof message === 'string' ? message : JSON.stringify(record);
  }
  return undefined;
}

/** The best human-readable message in a non-2xx body: an error object's message, FastAPI's `detail`, or the text. */
export function httpErrorMessage(status: number, bodyText: string): string {
  let detail = bodyText.trim();
  try {
    const parsed: unknown = JSON.parse(bodyText);
    const fromError = errorMessageOf(parsed);
    if (fromError !== undefined) detail = fromError;
    else if (typeof parsed === 'object' && parsed !== null && 'detail' in parsed) {
      const fastApiDetail = (parsed as Record<string, unknown>)['detail'];
      detail = typeof fastApiDetail === 'string' ? fastApiDetail : JSON.stringify(fastApiDetail);
    } else if (typeof parsed === 'object' && parsed !== null && typeof (parsed as Record<string, unknown>)['message'] === 'string') {
      detail = (parsed as Record<string, string>)['message'] as string;
    }
  } catch {
    // Not JSON: keep the text as it is.
  }
  return truncateMessage(detail.length > 0 ? `HTTP ${status}: ${detail}` : `HTTP ${status} with an empty body`);
}
