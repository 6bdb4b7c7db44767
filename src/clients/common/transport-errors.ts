import type { ErrorClass } from '../../types/record.js';

/** Where in a request's life a transport error happened: it decides the class of resets and closed sockets. */
export type ExchangePhase = 'before_response' | 'in_body';

/**
 * Maps an error from undici, our socket pool or the socket to an error class. Deadlines come from undici's own timers (connect timeout,
 * `headersTimeout`, `bodyTimeout`), so they are recognised by undici's stable error codes.
 */
export function classifyTransportError(error: unknown, phase: ExchangePhase): ErrorClass {
  const code = errorCode(error);
  // undici's HTTP parser (llhttp): its errors are HTTPParserError, some with an HPE_ code.
  if ((code !== undefined && code.startsWith('HPE_')) || (error instanceof Error && error.name === 'HTTPParserError')) return 'protocol_error';
  switch (code) {
    case 'EMFILE':
    case 'ENFILE':
    case 'ENOMEM':
    case 'ENOBUFS':
      // This process's own limits (open files, memory), whatever the server did: the harness's failure, not the server's.
      return 'harness_limit';
    case 'HTTP_PARSE':
      return 'protocol_error';
    case 'ECONNREFUSED':
      return 'connect_refused';
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return phase === 'before_response' ? 'connect_timeout' : 'network_error';
    case 'UND_ERR_HEADERS_TIMEOUT':
      return 'first_byte_timeout';
    case 'UND_ERR_BODY_TIMEOUT':
      return 'idle_timeout';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
    case 'SOCKET_CLOSED':
      // A reset before any answer means the server went away (record.ts: "reset before any answer" counts as
      // refused); a socket closed mid-body means the stream ended early.
      return phase === 'before_response' ? 'connect_refused' : 'stream_truncated';
    default:
      return 'network_error';
  }
}

export function describeTransportError(error: unknown): string {
  if (error instanceof Error) {
    const code = errorCode(error);
    const causeMessage = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    const text = `${code === undefined ? error.name : code}: ${error.message}${causeMessage}`;
    if (classifyTransportError(error, 'before_response') !== 'harness_limit') return text;
    // Said first: the message is cut at 300 characters, and this is what the reader must act on.
    const fix = code === 'EMFILE' || code === 'ENFILE' ? 'raise the open-file limit (ulimit -n) or lower --max-concurrency' : 'give the client more memory or lower --max-concurrency';
    return `servelab's own limit, not the server's (${fix}): ${text}`;
  }
  return String(error);
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  // Node sometimes wraps the socket error (e.g. AggregateError for happy-eyeballs connects).
  const cause = (error as { cause?: unknown }).cause;
  if (cause !== undefined && cause !== error) return errorCode(cause);
  const errors = (error as { errors?: unknown }).errors;
  if (Array.isArray(errors) && errors.length > 0) return errorCode(errors[0]);
  return undefined;
}
