import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ServelabError } from '../../../src/errors/servelab-error.js';
import { loadRoutingPolicy } from '../../../src/routing/policies/registry.js';
import { makeWorkers, request, routeMany } from './worker-fixture.js';

const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
const example = fileURLToPath(new URL('../../../examples/custom-routing-policy/least-recently-chosen.js', import.meta.url));

async function loadError(path: string): Promise<ServelabError> {
  const error: unknown = await loadRoutingPolicy(path).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ServelabError);
  return error as ServelabError;
}

describe('loading routing policies', () => {
  it('gives builtin policies by name', async () => {
    expect((await loadRoutingPolicy('cache_aware')).name).toBe('cache_aware');
  });

  it('loads the worked example module and routes with it', async () => {
    const policy = await loadRoutingPolicy(example, { seed: 1 });
    expect(policy.name).toBe('least_recently_chosen');
    const workers = makeWorkers(3);
    expect(routeMany(policy, workers, ['', '', '', ''])).toEqual([0, 1, 2, 0]);
  });

  it('resolves relative paths against the given directory, and accepts a default-exported policy object', async () => {
    const policy = await loadRoutingPolicy('./policy-default-object.mjs', {}, fileURLToPath(new URL('../fixtures/', import.meta.url)));
    expect(policy.choose(request('r'), makeWorkers(3))?.index).toBe(2);
  });

  it('fails with MODULE_LOAD_FAILED for a missing module, naming the path', async () => {
    const error = await loadError('./no/such/policy.js');
    expect(error.code).toBe('MODULE_LOAD_FAILED');
    expect(error.message).toContain('no/such/policy.js');
  });

  it('fails with MODULE_LOAD_FAILED for a module without the interface, saying what is missing', async () => {
    const error = await loadError(fixture('policy-without-choose.mjs'));
    expect(error.code).toBe('MODULE_LOAD_FAILED');
    expect(error.message).toContain('`choose` is not a function');
  });

  it('fails with MODULE_LOAD_FAILED for a module that does not parse', async () => {
    // Written at test time: a file that does not parse would also break the linter if it lived in the tree.
    const directory = mkdtempSync(join(tmpdir(), 'servelab-policy-'));
    try {
      const path = join(directory, 'broken.mjs');
      writeFileSync(path, 'export const createPolicy = (;\n');
      expect((await loadError(path)).code).toBe('MODULE_LOAD_FAILED');
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('rejects an unknown bare name with the builtin names listed', async () => {
    const error = await loadError('cache-aware');
    expect(error.code).toBe('MODULE_LOAD_FAILED');
    expect(error.message).toContain('round_robin');
  });
});
