import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock/clock.js';
import { createProtocolClient, loadProtocolClient, protocolClients } from '../../src/clients/registry.js';
import { isServelabError } from '../../src/errors/servelab-error.js';
import type { ProtocolClientOptions } from '../../src/types/client.js';

const options: ProtocolClientOptions = {
  baseUrl: 'http://127.0.0.1:9',
  stream: true,
  sampling: { temperature: 0, ignoreEos: true },
  clock: systemClock,
};

describe('protocol client registry', () => {
  it('creates each built-in client under its name', async () => {
    for (const name of Object.keys(protocolClients)) {
      const client = createProtocolClient(name, options);
      expect(client.protocol).toBe(name);
      await client.close();
    }
  });

  it('rejects an unknown name with INVALID_CONFIG listing the known ones', () => {
    let thrown: unknown;
    try {
      createProtocolClient('grpc', options);
    } catch (error) {
      thrown = error;
    }
    expect(isServelabError(thrown) && thrown.code).toBe('INVALID_CONFIG');
    expect(String((thrown as Error).message)).toContain('openai-chat');
  });

  it('rejects a base URL that is not http(s)', () => {
    expect(() => createProtocolClient('sglang', { ...options, baseUrl: 'localhost:30000' })).toThrow(/http/);
    expect(() => createProtocolClient('sglang', { ...options, maxConnections: 0 })).toThrow(/maxConnections/);
  });

  it('loads a client from a module path, and says MODULE_LOAD_FAILED when it cannot', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'servelab-client-'));
    try {
      const modulePath = join(directory, 'custom-client.mjs');
      await writeFile(
        modulePath,
        "export default (options) => ({ protocol: 'custom:' + options.baseUrl, send: async () => ({ success: true }), close: async () => {} });\n",
      );
      const client = await loadProtocolClient(modulePath, options);
      expect(client.protocol).toBe('custom:http://127.0.0.1:9');
      await expect(loadProtocolClient(join(directory, 'missing.mjs'), options)).rejects.toMatchObject({ code: 'MODULE_LOAD_FAILED' });
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
