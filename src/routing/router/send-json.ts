import type { ServerResponse } from 'node:http';

/** Answers with a JSON body and its exact length: every answer the router itself gives (control paths, refusals). */
export function sendJson(response: ServerResponse, status: number, body: unknown, extraHeaders: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...extraHeaders,
  });
  response.end(text);
}
