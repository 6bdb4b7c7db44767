import type { IncomingMessage, ServerResponse } from 'node:http';

/** Largest request body accepted (a 128k-token prompt as JSON ids is about 1 MB; leave ample room). */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

export class BadRequest extends Error {}

export async function readJsonBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of request) {
    const buffer = chunk as Buffer;
    length += buffer.length;
    if (length > MAX_BODY_BYTES) throw new BadRequest(`The request body is larger than ${MAX_BODY_BYTES} bytes.`);
    chunks.push(buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new BadRequest(`The request body is not valid JSON: ${(error as Error).message}`);
  }
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

export function sendText(response: ServerResponse, status: number, text: string, contentType = 'text/plain'): void {
  response.writeHead(status, { 'content-type': `${contentType}; charset=utf-8`, 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

export function startEventStream(response: ServerResponse): void {
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
}

export function writeEvent(response: ServerResponse, payload: unknown): void {
  response.write(`data: ${JSON.stringify(payload)}\n\n`);
}

export function endEventStream(response: ServerResponse): void {
  response.end('data: [DONE]\n\n');
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads an optional non-negative integer field; throws BadRequest naming the field otherwise. */
export function optionalCount(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new BadRequest(`${field} must be a non-negative integer, got ${JSON.stringify(value)}.`);
  }
  return value;
}
