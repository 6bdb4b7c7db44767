/**
 * The upstream for bench/router-overhead.ts, run in its own process: a streaming server that does no work. Each
 * POST gets its headers and a first SSE event at once, then `[DONE]` on the next turn of the event loop. Prints
 * `URL http://127.0.0.1:PORT` when it listens.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const firstEvent = `data: ${JSON.stringify({ text: ' hello', meta_info: { id: 'stub', completion_tokens: 1, finish_reason: null } })}\n\n`;
const lastEvent = `data: ${JSON.stringify({ text: ' hello world', meta_info: { id: 'stub', completion_tokens: 2, finish_reason: { type: 'length' } } })}\n\ndata: [DONE]\n\n`;

const server = createServer({ noDelay: true, keepAliveTimeout: 60_000 }, (request, response) => {
  if (request.method === 'GET') {
    response.writeHead(200, { 'content-type': 'application/json' }).end(request.url === '/get_load' ? '{"load":0}' : '{}');
    return;
  }
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write(firstEvent);
    setImmediate(() => response.end(lastEvent));
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`URL http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
