import type { IncomingMessage } from 'node:http';

/**
 * Reads a whole request body. Bodies of LLM requests are small (a prompt), and the router needs them whole anyway:
 * to find the routing key and to send them again when it retries on another worker.
 */
export function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
    request.once('error', reject);
  });
}
