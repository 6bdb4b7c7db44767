import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli } from '../../helpers/cli.js';
import { ipMissing } from '../../helpers/require-tool.js';
import { slurmMissing, startSlurmCluster, type SlurmTestCluster } from '../../helpers/slurm-cluster.js';

/**
 * The test Slurm with each node at an address of its own (its slurmd in a network namespace of its own, on a bridge to
 * this host): a routing test whose servers, router and load generators talk across those addresses, as on a real
 * cluster, where 127.0.0.1 on one node is not another node.
 */
const fastProfile = fileURLToPath(new URL('../../fixtures/profiles/simple-2ms.json', import.meta.url));
const NUM_PROMPTS = 200;

const cannotRun = slurmMissing() ?? ipMissing();

describe.skipIf(cannotRun !== undefined)('a routing test on Slurm nodes with addresses of their own', () => {
  let cluster: SlurmTestCluster;
  let workDirectory: string;
  beforeAll(async () => {
    workDirectory = await mkdtemp(join(tmpdir(), 'servelab-slurm-addresses-'));
    cluster = await startSlurmCluster(4, { distinctAddresses: true });
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    await rm(workDirectory, { recursive: true, force: true });
  }, 60_000);

  it('runs each node\'s steps at its own address, with no route past this host', async () => {
    const allocation = await cluster.allocate(4);
    const step = (node: string, ...command: string[]): Promise<string> => cluster.command('srun', ['--jobid', allocation.jobId, '--overlap', '--nodelist', node, '--ntasks', '1', ...command]);
    const addresses: string[] = [];
    for (const node of cluster.nodes) addresses.push(/inet (\S+)\//.exec(await step(node, 'ip', '-4', '-o', 'addr', 'show', 'scope', 'global'))?.[1] ?? '');
    const subnet = /^(\d+\.\d+\.\d+)\.11$/.exec(addresses[0] ?? '')?.[1];
    expect(subnet, addresses.join(' ')).toBeDefined();
    expect(addresses).toEqual(['11', '12', '13', '14'].map((last) => `${subnet}.${last}`));
    // Inside a node only the subnet is routed: an outside address is unreachable, so nothing leaves the machine.
    expect(await step('n2', 'sh', '-c', 'ip route get 192.0.2.1 2>&1 || true')).toMatch(/unreachable/i);
    await cluster.command('scancel', [allocation.jobId]);
  }, 60_000);

  it('routes over 3 servers on 3 addresses with 2 load generators on others, every record kept, each server\'s node named', async () => {
    const allocation = await cluster.allocate(4);
    const outputDir = join(workDirectory, 'route');
    const run = startCli(
      ['route', '--num-gpus', '3', '--request-rate', '30', '--num-prompts', String(NUM_PROMPTS), '--random-input-len', '16', '--random-output-len', '8', '--profile', fastProfile,
        '--routing-policy', 'round_robin', '--output-dir', outputDir, '--progress', 'off', '--seed', '7', '--launcher', 'slurm', '--client-nodes', '2'],
      { env: allocation.env },
    );
    try {
      expect((await run.done).code, run.stderr().slice(-3000)).toBe(0);
    } finally {
      run.child.kill('SIGKILL');
    }
    expect(await cluster.runningSteps()).toEqual([]);
    const summary = JSON.parse(readFileSync(join(outputDir, 'summary.json'), 'utf8')) as {
      extras?: { cluster?: { serverUrls?: string[]; routerUrl?: string; serverNodes?: string[] }; loadGenerators?: { node?: string; url: string; recordsLost: number }[] };
    };
    // Servers on n1-n3 at their nodes' addresses, the router beside server 0, the generators on n4 and n3: no loopback.
    const placed = summary.extras?.cluster;
    const addressOf = (url: string | undefined): string => new URL(url ?? 'http://missing').hostname;
    const serverAddresses = (placed?.serverUrls ?? []).map(addressOf);
    expect(placed?.serverNodes).toEqual(['n1', 'n2', 'n3']);
    expect(new Set(serverAddresses).size).toBe(3);
    expect(serverAddresses.every((address) => /^10\.253\.\d+\.1[1-3]$/.test(address))).toBe(true);
    expect(addressOf(placed?.routerUrl)).toBe(serverAddresses[0]);
    const generators = summary.extras?.loadGenerators ?? [];
    expect(generators.map((generator) => [generator.node, generator.recordsLost])).toEqual([
      ['n4', 0],
      ['n3', 0],
    ]);
    expect(addressOf(generators[1]?.url)).toBe(serverAddresses[2]);
    expect(addressOf(generators[0]?.url)).not.toBe('127.0.0.1');
    // Every request is a successful record naming its server and that server's node.
    const records = readFileSync(join(outputDir, 'requests.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { success: boolean; host?: string; host_node?: string });
    expect(records).toHaveLength(NUM_PROMPTS);
    expect(records.filter((record) => !record.success)).toEqual([]);
    const nodeOfAddress = new Map(serverAddresses.map((address, index) => [address, placed?.serverNodes?.[index]]));
    expect(records.filter((record) => record.host === undefined || record.host_node !== nodeOfAddress.get(addressOf(record.host)))).toEqual([]);
  }, 240_000);
});
