import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { systemClock } from '../../../src/clock/clock.js';
import type { ProtocolName } from '../../../src/clients/registry.js';
import { createProtocolClient } from '../../../src/clients/registry.js';
import type { ClientRequest, ProtocolClientOptions } from '../../../src/types/client.js';
import type { ClientOutcome } from '../../../src/types/record.js';

/**
 * Hostile servers for the client's tests: plain node:http on loopback port 0, written for the tests (no fixture: the
 * shapes are the protocols' own, with impossible values). A file that imports this closes its servers after each test.
 */

export type HostileHandler = (request: IncomingMessage, response: ServerResponse) => void;

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** Starts a server that answers every request, once its body is read, with `handler`; returns its base URL. */
export async function hostile(handler: HostileHandler): Promise<string> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => handler(request, response));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Sends one small streamed request with a fresh client of `protocol`, and closes the client. */
export async function sendOne(protocol: ProtocolName, url: string, request: ClientRequest, options: Partial<ProtocolClientOptions> = {}): Promise<ClientOutcome> {
  const client = createProtocolClient(protocol, {
    baseUrl: url,
    stream: true,
    sampling: { temperature: 0, ignoreEos: true },
    clock: systemClock,
    ...options,
  });
  try {
    return await client.send(request);
  } finally {
    await client.close();
  }
}

/** Answers 200 with these SSE events (strings as they are, objects as JSON), then ends. */
export function sse(response: ServerResponse, events: unknown[]): void {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const event of events) response.write(`data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`);
  response.end();
}
