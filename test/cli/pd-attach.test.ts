import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchSimServer } from '../../src/cluster/launchers/sim/launch-sim-server.js';
import { resolveRoutingTestConfig } from '../../src/config/routing-test-config.js';
import { parseCsv } from '../../src/report/csv/csv-format.js';
import type { ServerHandle } from '../../src/types/cluster.js';
import { assertCliBuilt, runCli } from '../helpers/cli.js';

const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
let workDirectory: string;
let servers: ServerHandle[] = [];

beforeAll(async () => {
  assertCliBuilt();
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-pd-attach-'));
  // Servers that already run, as a user's would: one prefill, two decode.
  servers = await Promise.all(
    (['prefill', 'decode', 'decode'] as const).map((role, index) => launchSimServer({ name: `pd-${role}-${index}`, role, profile: fastProfile, logPath: join(workDirectory, `server-${index}.log`) })),
  );
}, 60_000);
afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await rm(workDirectory, { recursive: true, force: true });
});

describe('servelab route --target attach --pd-disaggregation', () => {
  it('routes to running prefill and decode servers given by --prefill-url URL[,PORT] and --decode-url, behind the builtin router', async () => {
    const [prefill, decodeA, decodeB] = servers as [ServerHandle, ServerHandle, ServerHandle];
    const outputDir = join(workDirectory, 'run');
    // A simulated prefill server serves its bootstrap endpoint on its HTTP port (src/engine/http/pd-http.ts).
    const result = await runCli([
      'route', '--target', 'attach', '--pd-disaggregation', '--prefill-url', `${prefill.url},${new URL(prefill.url).port}`, '--decode-url', decodeA.url, '--decode-url', decodeB.url,
      '--decode-policy', 'round_robin', '--request-rate', '30', '--num-prompts', '12', '--random-input-len', '16', '--random-output-len', '4',
      '--output-dir', outputDir, '--progress', 'off',
    ], { timeoutMs: 120_000 });
    expect(result.code, result.stderr).toBe(0);
    const rows = parseCsv(await readFile(join(outputDir, 'requests.csv'), 'utf8'));
    const header = rows[0] as string[];
    const body = rows.slice(1);
    expect(body).toHaveLength(12);
    const decodeHosts = new Set<string>();
    for (const row of body) {
      expect(row[header.indexOf('success')]).toBe('true');
      expect(row[header.indexOf('prefill_host')]).toBe(prefill.url);
      decodeHosts.add(row[header.indexOf('decode_host')] as string);
    }
    expect([...decodeHosts].sort()).toEqual([decodeA.url, decodeB.url].sort());
    // The per-role tables say it too.
    expect(result.stdout).toContain('Decode nodes');
    const summary = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as { metrics: { pd?: { pairs: { requests: number }[] } } };
    expect(summary.metrics.pd?.pairs.map((pair) => pair.requests)).toEqual([6, 6]);
  }, 120_000);

  it('counts attached servers from the flags, keeps a bootstrap port as given, and refuses what does not fit', () => {
    const config = resolveRoutingTestConfig({ target: 'attach', pdDisaggregation: true, prefillUrls: ['http://10.0.0.1:30000,8998', 'http://10.0.0.2:30000'], decodeUrls: ['http://10.0.0.3:30000'] });
    expect([config.numPrefill, config.numDecode, config.numGpus]).toEqual([2, 1, 3]);
    expect(() => resolveRoutingTestConfig({ target: 'attach', pdDisaggregation: true, prefillUrls: ['http://10.0.0.1:30000,99999'], decodeUrls: ['http://10.0.0.3:30000'] })).toThrow(/bad bootstrap port in --prefill-url "http:\/\/10\.0\.0\.1:30000,99999"/);
    expect(() => resolveRoutingTestConfig({ target: 'attach', pdDisaggregation: true, prefillUrls: ['http://10.0.0.1:30000'] })).toThrow(/needs at least one --prefill-url URL\[,BOOTSTRAP_PORT\|none\] and one --decode-url URL/);
    expect(() => resolveRoutingTestConfig({ target: 'sim', pdDisaggregation: true, decodeUrls: ['http://10.0.0.3:30000'] })).toThrow(/--prefill-url and --decode-url attach to running servers/);
    expect(() => resolveRoutingTestConfig({ target: 'attach', pdDisaggregation: true, prefillUrls: ['http://10.0.0.1:30000'], decodeUrls: ['http://10.0.0.3:30000'], serverRequestLogDir: '/tmp/logs' })).toThrow(/one attached directory does not say which server wrote which/);
    expect(() => resolveRoutingTestConfig({ target: 'attach', url: 'http://10.0.0.9:30000', prefillUrls: ['http://10.0.0.1:30000'] })).toThrow(/--prefill-url apply to prefill\/decode disaggregation only/);
  });
});
