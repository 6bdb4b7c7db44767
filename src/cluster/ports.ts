import { createServer } from 'node:net';
import { ServelabError } from '../errors/servelab-error.js';

/** Resolves true when nothing listens on host:port (we could bind it ourselves). */
export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A port the OS calls free right now. Another process could take it before we use it; launchers then fail clearly. */
export function findFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port: 0, host }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Throws PORT_IN_USE, naming the flag to change, when something already listens on the port. */
export async function assertPortFree(port: number, flag: string, host = '127.0.0.1'): Promise<void> {
  if (!(await isPortFree(port, host))) {
    throw new ServelabError('PORT_IN_USE', `port ${port} on ${host} is already in use; stop what listens there or choose another port with ${flag}`);
  }
}
