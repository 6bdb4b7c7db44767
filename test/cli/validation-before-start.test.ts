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

describe('the did-you-mean distance', () => {
  it('counts a typo as one edit each (a swap of neighbours too) and suggests only close names', async () => {
    const { closestName, editDistance } = await import('../../src/utils/did-you-mean.js');
    expect(editDistance('lmp', 'lpm')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(closestName('lmp', ['fcfs', 'lpm'])).toBe('lpm');
    expect(closestName('Cache-Aware', ['cache_aware', 'random'])).toBe('cache_aware');
    expect(closestName('xyz', ['fcfs', 'lpm'])).toBeUndefined();
  });

  it('checks the simulated engine\'s profile and schedule policy before anything starts, with a suggestion', async () => {
    for (const [flag, value, suggestion] of [['--profile', 'lama-3-8b-h100', 'llama-3-8b-h100'], ['--schedule-policy', 'lmp', 'lpm']] as const) {
      const outputDir = join(workDirectory, `typo-${value}`);
      const result = await runCli(['node', flag, value, '--output-dir', outputDir, '--progress', 'lines']);
      expect(result.code, flag).not.toBe(0);
      expect(result.stderr, flag).toContain(`Did you mean "${suggestion}"?`);
      expect(existsSync(outputDir), flag).toBe(false);
    }
  });
});
