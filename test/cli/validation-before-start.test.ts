import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeTest, RoutingTest } from '../../src/index.js';
import { runCli } from '../helpers/cli.js';

let workDirectory: string;

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-validation-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

describe('enumerated values are checked before anything starts, with a did-you-mean', () => {
  it('servelab route --routing-policy cache-aware fails before any server starts, suggesting cache_aware', async () => {
    const outputDir = join(workDirectory, 'typo-run');
    const result = await runCli(['route', '--num-gpus', '4', '--routing-policy', 'cache-aware', '--output-dir', outputDir, '--progress', 'lines']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown routing policy "cache-aware"');
    expect(result.stderr).toContain('Did you mean "cache_aware"?');
    // Nothing started: no run directory (a launched server writes its log under <run>/logs/ at once), no progress line.
    expect(existsSync(outputDir)).toBe(false);
    expect(result.stdout).toBe('');
  });

  it('suggests the closest choice for a mistyped flag value and for a config file value alike', async () => {
    const flag = await runCli(['node', '--dataset-name', 'shared_prefix', '--output-dir', join(workDirectory, 'flag')]);
    expect(flag.code).not.toBe(0);
    expect(flag.stderr).toContain('Did you mean "shared-prefix"?');
    expect(() => new NodeTest({ arrival: 'possion' })).toThrow(/arrival \(--arrival\): must be one of .*, not "possion"\. Did you mean "poisson"\?/);
    expect(() => new RoutingTest({ router: 'sglang_router' })).toThrow(/Did you mean "sglang-router"\?/);
    expect(() => new RoutingTest({ routing_policy: 'round-robin' })).toThrow(/Did you mean "round_robin"\?/);
    expect(() => new RoutingTest({ router: 'nginx', routingPolicy: 'least-conn' })).toThrow(/Did you mean "least_conn"\?/);
    // No suggestion when nothing is close: a suggestion must be a likely intent.
    expect(() => new RoutingTest({ routingPolicy: 'zzzz' })).toThrow(/unknown routing policy "zzzz": use one of [^?]*$/);
    // A module path is not a typo: it is loaded (and checked) when the router starts.
    expect(new RoutingTest({ routingPolicy: './my-policy.js' }).config.routingPolicy).toBe('./my-policy.js');
  });
});
