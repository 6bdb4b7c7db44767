import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { smgRouterArgs } from '../../src/cluster/launchers/smg/smg-args.js';
import { resolveRoutingTestConfig } from '../../src/config/routing-test-config.js';
import { SMG_POLICIES, SMG_PREFILL_POLICIES } from '../../src/config/smg-policies.js';
import { cliPath, runCli } from '../helpers/cli.js';
import { expectPdPairs } from '../helpers/pd-pairs.js';
import { readRequestRows } from '../helpers/requests-csv.js';

/**
 * smg cannot be installed here (no PyPI); a stand-in `smg` on PATH (test/fixtures/stand-ins/smg-bin/smg) records its
 * flags, refuses any that is not one of smg's RouterArgs fields, and answers smg's worker API and metrics in front of
 * servelab's builtin router.
 */
const smgDirectory = fileURLToPath(new URL('../fixtures/stand-ins/smg-bin/', import.meta.url));
const pythonDirectory = fileURLToPath(new URL('../fixtures/stand-ins/', import.meta.url));
const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
const reference = JSON.parse(await readFile(fileURLToPath(new URL('../fixtures/stand-ins/smg-router-args.json', import.meta.url)), 'utf8')) as { fields: string[]; policies: string[]; prefill_policies: string[]; argparse_only_flags: string[] };

let workDirectory: string;
let recordPath: string;
beforeEach(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-smg-'));
  recordPath = join(workDirectory, 'calls.jsonl');
});
afterEach(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

function environment(directories: string[], mode = 'ready'): NodeJS.ProcessEnv {
  return { PATH: [...directories, process.env.PATH ?? ''].join(delimiter), STANDIN_MODE: mode, STANDIN_RECORD: recordPath, STANDIN_SERVELAB_CLI: cliPath, STANDIN_PROFILE: fastProfile };
}

async function recorded(): Promise<Record<string, unknown>[]> {
  const text = await readFile(recordPath, 'utf8').catch(() => '');
  return text.trim() === '' ? [] : text.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
}

const routeArgs = (outputDir: string, extra: string[]): string[] => [
  'route', '--num-gpus', '2', '--router', 'smg', '--profile', fastProfile, '--random-input-len', '16', '--random-output-len', '4',
  '--output-dir', outputDir, '--progress', 'off', ...extra,
];

describe('smg launch flags', () => {
  it('are all smg RouterArgs fields, with health checks that notice a dead worker within about a second', () => {
    const args = smgRouterArgs({ workerUrls: ['http://127.0.0.1:1', 'http://127.0.0.1:2'], policy: 'least_load', port: 3000, prometheusPort: 3001 });
    const flags = args.filter((argument) => argument.startsWith('--'));
    for (const flag of flags) expect(reference.fields, flag).toContain(flag.slice(2).replaceAll('-', '_'));
    const value = (flag: string): string | undefined => args[args.indexOf(flag) + 1];
    expect(Number(value('--health-check-interval-secs')) * Number(value('--health-failure-threshold'))).toBeLessThanOrEqual(1);
    expect(Number(value('--health-check-timeout-secs'))).toBeLessThanOrEqual(1);
    expect(value('--policy')).toBe('least_load');
  });

  it('accepts exactly smg\'s policy names', () => {
    expect([...SMG_POLICIES].sort()).toEqual([...reference.policies].sort());
    for (const policy of SMG_POLICIES) expect(resolveRoutingTestConfig({ router: 'smg', routingPolicy: policy }).routingPolicy).toBe(policy);
    expect(() => resolveRoutingTestConfig({ router: 'smg', routingPolicy: 'shortest_queue' })).toThrow(/--router smg supports random, round_robin, passthrough, cache_aware, power_of_two, least_load, manual, consistent_hashing, prefix_hash, not shortest_queue/);
    expect(() => resolveRoutingTestConfig({ router: 'sglang-router', routingPolicy: 'least_load' })).toThrow(/use --router smg/);
  });
});

describe('smg in PD mode', () => {
  it('passes --pd-disaggregation, one --prefill URL PORT|none per prefill server and one --decode URL per decode server, and no --worker-urls', () => {
    const args = smgRouterArgs({
      workerUrls: ['http://127.0.0.1:1', 'http://127.0.0.1:2', 'http://127.0.0.1:3'],
      policy: 'round_robin',
      port: 3000,
      prometheusPort: 3001,
      pd: { prefill: [{ url: 'http://127.0.0.1:1', bootstrapPort: 8998 }, { url: 'http://127.0.0.1:2', bootstrapPort: null }], decode: ['http://127.0.0.1:3'], prefillPolicy: 'bucket' },
    });
    for (const flag of args.filter((argument) => argument.startsWith('--'))) {
      const field = flag.slice(2).replaceAll('-', '_');
      expect([...reference.fields, ...reference.argparse_only_flags], flag).toContain(field);
    }
    expect(args).not.toContain('--worker-urls');
    expect(args).toContain('--pd-disaggregation');
    const groups = (flag: string): string[][] => args.flatMap((argument, index) => (argument === flag ? [args.slice(index + 1, args.findIndex((next, at) => at > index && next.startsWith('--')))] : []));
    expect(groups('--prefill')).toEqual([['http://127.0.0.1:1', '8998'], ['http://127.0.0.1:2', 'none']]);
    expect(groups('--decode')).toEqual([['http://127.0.0.1:3']]);
    expect(args[args.indexOf('--prefill-policy') + 1]).toBe('bucket');
    // Left out, smg applies --policy to the decode side, as servelab's own default does.
    expect(args).not.toContain('--decode-policy');
  });

  it("checks the side policies against smg's own lists (bucket for prefill only) and sglang-router's, before anything starts", () => {
    expect([...SMG_PREFILL_POLICIES].sort()).toEqual([...reference.prefill_policies].sort());
    const config = resolveRoutingTestConfig({ router: 'smg', pdDisaggregation: true, numPrefill: 2, numDecode: 1, prefillPolicy: 'bucket', decodePolicy: 'least_load' });
    expect(config.numGpus).toBe(3);
    expect(() => resolveRoutingTestConfig({ router: 'smg', pdDisaggregation: true, decodePolicy: 'bucket' })).toThrow(/--router smg takes random, .*prefix_hash for --decode-policy, not bucket/);
    expect(() => resolveRoutingTestConfig({ router: 'sglang-router', pdDisaggregation: true, prefillPolicy: 'least_load' })).toThrow(/--router sglang-router takes cache_aware, round_robin, random, power_of_two for --prefill-policy, not least_load/);
    expect(() => resolveRoutingTestConfig({ router: 'nginx', pdDisaggregation: true })).toThrow(/not nginx/);
  });

  it('runs a 1P1D routing test on the sim behind `smg launch --pd-disaggregation`: each record names its pair and room, from the taps', async () => {
    const outputDir = join(workDirectory, 'run');
    const result = await runCli(
      ['route', '--pd-disaggregation', '--num-prefill', '1', '--num-decode', '1', '--router', 'smg', '--routing-policy', 'round_robin', '--prefill-policy', 'bucket',
        '--profile', fastProfile, '--random-input-len', '16', '--random-output-len', '4', '--num-prompts', '12', '--request-rate', '40', '--output-dir', outputDir, '--progress', 'off'],
      { env: environment([smgDirectory, pythonDirectory]) },
    );
    expect(result.stderr).not.toMatch(/servelab: /);
    expect(result.code).toBe(0);
    const launch = (await recorded()).find((entry) => entry['program'] === 'smg');
    const args = launch?.['args'] as string[];
    expect(args).toContain('--pd-disaggregation');
    expect(args).not.toContain('--worker-urls');
    // A simulated prefill server serves its bootstrap endpoint on its own HTTP port (not its tap's): the decode server
    // reaches it directly, as SGLang's decode servers reach their prefill server's bootstrap port.
    const summary = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as { extras?: { cluster?: { serverUrls?: string[] } } };
    const prefillServerUrl = summary.extras?.cluster?.serverUrls?.[0] as string;
    expect(args[args.indexOf('--prefill') + 2]).toBe(new URL(prefillServerUrl).port);
    expect(args[args.indexOf('--prefill') + 1]).not.toBe(prefillServerUrl);
    expect(args[args.indexOf('--prefill-policy') + 1]).toBe('bucket');
    const rows = await readRequestRows(outputDir);
    expect(rows).toHaveLength(12);
    expectPdPairs(rows);
    for (const row of rows) {
      expect(row['prefill_host']).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      // Both legs go out at once: neither is a retry of the other.
      expect(row['retries'] ?? '').not.toBe('1');
    }
  }, 120_000);
});

describe('routing test behind smg (stand-in)', () => {
  it('launches `smg launch` with smg\'s flags, routes every request, and scrapes its smg_* metrics', async () => {
    const outputDir = join(workDirectory, 'run');
    const result = await runCli(routeArgs(outputDir, ['--routing-policy', 'prefix_hash', '--num-prompts', '30', '--request-rate', '60']), { env: environment([smgDirectory, pythonDirectory]) });
    expect(result.stderr).not.toMatch(/servelab: /);
    expect(result.code).toBe(0);
    const launches = (await recorded()).filter((entry) => entry['program'] === 'smg');
    expect(launches).toHaveLength(1);
    const args = launches[0]!['args'] as string[];
    expect(args[0]).toBe('launch');
    expect(args[args.indexOf('--policy') + 1]).toBe('prefix_hash');
    expect(args[args.indexOf('--health-check-interval-secs') + 1]).toBe('1');
    const csv = await readFile(join(outputDir, 'requests.csv'), 'utf8');
    expect(csv.trim().split('\n')).toHaveLength(31);
    const metrics = await readFile(join(outputDir, 'server-metrics.csv'), 'utf8');
    expect(metrics).toMatch(/smg_http_requests_total/);
  }, 120_000);

  it('drains and restores a worker through smg\'s worker API', async () => {
    const outputDir = join(workDirectory, 'run');
    const schedule = JSON.stringify([{ atS: 0.3, action: 'drain', nodes: [1] }, { atS: 0.8, action: 'restore', nodes: [1] }]);
    const result = await runCli(routeArgs(outputDir, ['--routing-policy', 'round_robin', '--num-prompts', '60', '--request-rate', '50', '--failure-schedule', schedule]), { env: environment([smgDirectory, pythonDirectory]) });
    expect(result.stderr).not.toMatch(/servelab: /);
    expect(result.code).toBe(0);
    const calls = (await recorded()).map((entry) => entry['api']).filter((api): api is string => typeof api === 'string');
    // smg's ids, not URLs: the DELETE used the id GET /workers gave.
    expect(calls.some((call) => /^DELETE \/workers\/[0-9a-f]{8}-smg-worker$/.test(call))).toBe(true);
    expect(calls).toContain('POST /workers');
  }, 120_000);

  it('says in one line when smg is not installed', async () => {
    // No smg on PATH, and a Python without the smg module.
    const result = await runCli(routeArgs(join(workDirectory, 'run'), ['--routing-policy', 'round_robin', '--num-prompts', '5']), { env: environment([pythonDirectory], 'no-module') });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/smg is not installed: no `smg` command on PATH and no smg module for "python"; install it \(pip install smg\) or use --router builtin/);
  }, 60_000);
});
