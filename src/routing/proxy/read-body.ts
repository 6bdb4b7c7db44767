import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The default cap on a request body the builtin router or a tap reads: far above an LLM request (a 128k-token prompt
 * is under a megabyte as text, a few as token ids), far below what one hostile POST could make a relay hold (a 1.5 GB
 * POST took the router to 3 GB: the body and its copy).
 */
export const DEFAULT_MAX_REQUEST_BODY_BYTES = 64 * 2 ** 20;

/** A request body larger than the relay's cap: answered with 413, never read further. */
export class RequestBodyTooLarge extends Error {
  readonly maxBytes: number;

  constructor(maxBytes: number) {
    super(`the request body is larger than the ${maxBytes} bytes this relay reads`);
    this.name = 'RequestBodyTooLarge';
    this.maxBytes = maxBytes;
  }
}

/**
 * Reads a whole request body of at most `maxBytes`. Bodies of LLM requests are small (a prompt), and the router needs
 * them whole anyway: to find the routing key and to send them again when it retries on another worker. A larger one
 * (by its Content-Length, or by the bytes as they come) rejects with `RequestBodyTooLarge` at once; what was read is
 * dropped and the rest is left unread.
 */
export function readBody(request: IncomingMessage, maxBytes = DEFAULT_MAX_REQUEST_BODY_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      reject(new RequestBodyTooLarge(maxBytes));
      return;
    }
    let chunks: Buffer[] = [];
    let bytes = 0;
    const onData = (chunk: Buffer): void => {
      bytes += chunk.length;
      if (bytes > maxBytes) {
        chunks = [];
        request.off('data', onData);
        request.pause();
        reject(new RequestBodyTooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    request.on('data', onData);
    request.once('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
    request.once('error', reject);
  });
}

/**
 * Answers a body past the cap with 413 and closes the connection: its unread rest must not be taken for the next
 * request on a keep-alive connection.
 */
export function refuseLargeBody(response: ServerResponse, error: RequestBodyTooLarge, who: string): void {
  const text = JSON.stringify({ error: { message: `${who}: ${error.message}; send a smaller request`, type: 'request_too_large' } });
  response.writeHead(413, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), connection: 'close' });
  response.end(text, () => response.socket?.destroy());
}
