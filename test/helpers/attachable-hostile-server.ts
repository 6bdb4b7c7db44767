import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';

/**
 * A hostile server the attach target accepts: `/health` answers 200, every other request (once its body is read) gets
 * `generate`'s answer. Loopback, port 0; a file that imports this closes its servers after all its tests.
 */
const servers: Server[] = [];

afterAll(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

export async function attachableHostileServer(generate: (response: ServerResponse) => void): Promise<string> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      if (request.url === '/health') {
        response.end('ok');
        return;
      }
      generate(response);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
