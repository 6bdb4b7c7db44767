import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchSmg } from '../../../../src/cluster/launchers/smg/launch-smg.js';

/**
 * A stand-in for the `smg` command, to test servelab's launcher without smg (the real one runs in
 * test/routing/smg-router.test.ts where smg is installed): it serves only what the launcher reads, `GET /workers` with
 * every worker healthy, in smg's shape (`{"workers": [{"is_healthy": true}]}`), on the `--port` it is given.
 */
const STAND_IN = `#!${process.execPath}
const args = process.argv.slice(2);
const port = Number(args[args.indexOf('--port') + 1]);
const workers = [];
for (let i = 0; i < args.length; i++) if (args[i] === '--worker-urls') for (let j = i + 1; j < args.length && !args[j].startsWith('--'); j++) workers.push({ url: args[j], is_healthy: true });
require('node:http').createServer((request, response) => {
  response.setHeader('content-type', 'application/json');
  response.end(JSON.stringify({ workers }));
}).listen(port, '127.0.0.1');
`;

let directory: string;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'servelab-smg-stand-in-'));
  await writeFile(join(directory, 'smg'), STAND_IN);
  await chmod(join(directory, 'smg'), 0o755);
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('launchSmg', () => {
  it("hands back smg's exit, so that smg dying mid-run is a run event (the run's watch waits on it)", async () => {
    const handle = await launchSmg({
      workerUrls: ['http://127.0.0.1:1', 'http://127.0.0.1:2'],
      policy: 'round_robin',
      port: await freePort(),
      prometheusPort: await freePort(),
      searchPath: directory,
      logPath: join(directory, 'smg.log'),
    });
    try {
      expect(handle.exited, 'the handle carries no exit to watch').toBeDefined();
      handle.signal?.('SIGKILL');
      expect(await handle.exited).toMatchObject({ signal: 'SIGKILL' });
    } finally {
      await handle.stop();
    }
  });
});
