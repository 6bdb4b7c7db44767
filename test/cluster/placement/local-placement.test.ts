import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { localPlacement } from '../../../src/cluster/placement/local/local-placement.js';
import { ServelabError } from '../../../src/errors/servelab-error.js';
import { placementConformance } from './placement-conformance.js';

placementConformance('local (default node)', () => localPlacement);
placementConformance('local (this host by name)', () => localPlacement, hostname());

describe('the local placement', () => {
  it('refuses a node other than this host, saying what to do', () => {
    let error: unknown;
    try {
      localPlacement.spawn({ name: 'elsewhere', command: process.execPath, args: ['-e', ''], node: 'gpu-node-17' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ServelabError);
    expect((error as ServelabError).code).toBe('INVALID_CONFIG');
    expect((error as Error).message).toContain('gpu-node-17');
  });

  it('names each process by its pid and runs it on loopback', async () => {
    const child = localPlacement.spawn({ name: 'id-probe', command: process.execPath, args: ['-e', ''] });
    expect(child.id).toBe(`pid ${child.pid}`);
    expect(child.host).toBe('127.0.0.1');
    await child.exited;
    await child.stop();
  });
});
