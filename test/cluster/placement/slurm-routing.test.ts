import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliPath, startCli } from '../../helpers/cli.js';
import { freePortRun } from '../../helpers/free-port-run.js';
import { slurmMissing, startSlurmCluster, type SlurmTestCluster } from '../../helpers/slurm-cluster.js';

const fastProfile = fileURLToPath(new URL('../../fixtures/profiles/simple-2ms.json', import.meta.url));
const NUM_PROMPTS = 300;

/** The same routing test, only the launcher differs: 3 simulated servers behind the builtin router. */
function routeArgs(outputDir: string): string[] {
  return ['route', '--num-gpus', '3', '--request-rate', '30', '--num-prompts', String(NUM_PROMPTS), '--random-input-len', '16', '--random-output-len', '8', '--profile', fastProfile, '--routing-policy', 'round_robin', '--output-dir', outputDir, '--progress', 'lines', '--seed', '7'];
}

/** Every file of a run directory, by path inside it. */
function filesOf(directory: string, prefix = ''): string[] {
  return readdirSync(join(directory, prefix), { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? filesOf(directory, join(prefix, entry.name)) : [join(prefix, entry.name)]))
    .sort();
}

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return probe();
}

describe.skipIf(slurmMissing() !== undefined)('a routing test placed by Slurm over 3 or 4 nodes', () => {
  let cluster: SlurmTestCluster;
  let workDirectory: string;
  beforeAll(async () => {
    workDirectory = await mkdtemp(join(tmpdir(), 'servelab-slurm-route-'));
    cluster = await startSlurmCluster(4);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    await rm(workDirectory, { recursive: true, force: true });
  }, 60_000);

  it('writes the same files as on one host, names each server\'s node, records a killed server step as an event naming its node, loses no record and leaves no step', async () => {
    const allocatedAtMs = Date.now();
    const allocation = await cluster.allocate(3);
    const slurmDir = join(workDirectory, 'slurm');
    const run = startCli([...routeArgs(slurmDir), '--launcher', 'slurm'], { env: allocation.env });
    try {
      // Server 1 (node-1) runs on the allocation's second node; its step is killed once the load is under way.
      const step = await waitFor(async () => {
        const steps = await cluster.command('squeue', ['--noheader', '--steps', '--format=%i %j %N']);
        return steps.split('\n').map((line) => line.trim().split(' ')).find(([, name]) => name === 'node-1');
      }, 60_000);
      expect(step, run.stderr()).toBeDefined();
      expect(step?.[2]).toBe('n2');
      expect(await waitFor(async () => (/sending|\d+\/\d+/.test(run.stderr()) && existsSync(join(slurmDir, 'requests.jsonl')) ? true : undefined), 60_000), run.stderr()).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await cluster.command('scancel', ['--signal=KILL', step?.[0] as string]);
      const exit = await run.done;
      expect(exit.code, `${run.stderr().slice(-2000)}`).toBe(0);
    } finally {
      run.child.kill('SIGKILL');
    }
    // Nothing left running in the allocation once servelab is done.
    expect(await cluster.runningSteps()).toEqual([]);

    const summary = JSON.parse(readFileSync(join(slurmDir, 'summary.json'), 'utf8')) as {
      metrics?: { routing?: { nodes: { node: number | null; host: string; placedOn?: string }[] } };
      events?: { kind: string; node?: number; detail?: string }[];
      run?: { t0EpochSeconds?: number };
    };
    const events = summary.events ?? [];
    const death = events.find((event) => event.kind === 'process_exit');
    expect(death, JSON.stringify(events)).toBeDefined();
    expect(death?.node).toBe(1);
    expect(death?.detail).toContain('node-1 on node n2 was killed by SIGKILL');
    // Every request is a record: those that needed the dead server are failures, none is missing.
    const records = readFileSync(join(slurmDir, 'requests.jsonl'), 'utf8').trim().split('\n');
    expect(records).toHaveLength(NUM_PROMPTS);
    expect((summary.metrics?.routing?.nodes ?? []).map((node) => [node.node, node.placedOn]).sort()).toEqual([
      [0, 'n1'],
      [1, 'n2'],
      [2, 'n3'],
    ]);
    const nodesCsv = readFileSync(join(slurmDir, 'nodes.csv'), 'utf8').trim().split('\n');
    expect(nodesCsv[0]?.split(',').at(-1)).toBe('placed_on');
    expect(nodesCsv.slice(1).map((line) => line.split(',').at(-1))).toEqual(['n1', 'n2', 'n3']);
    // Each process's log says which step and node it was.
    expect(readFileSync(join(slurmDir, 'logs', 'node-2.log'), 'utf8')).toMatch(/# servelab: step \d+\.\d+ on node n3/);
    // Every record that names its server names that server's node beside the URL (host_node), as nodes.csv does.
    const nodeOfUrl = new Map((summary.metrics?.routing?.nodes ?? []).map((node) => [node.host, node.placedOn]));
    const hostNodes = records.map((line) => JSON.parse(line) as { host?: string; host_node?: string }).filter((record) => record.host !== undefined);
    expect(hostNodes.length).toBeGreaterThan(NUM_PROMPTS / 2);
    expect(hostNodes.filter((record) => record.host_node === undefined || record.host_node !== nodeOfUrl.get(record.host as string))).toEqual([]);
    expect(new Set(hostNodes.map((record) => record.host_node))).toEqual(new Set(['n1', 'n2', 'n3']));

    // Record times are seconds after t0 (epoch seconds in summary.json).
    const firstArrivalS = (summary.run?.t0EpochSeconds ?? Number.NaN) + Math.min(...records.map((line) => (JSON.parse(line) as { arrival_time: number }).arrival_time));
    console.log(`salloc to first request on the test cluster: ${(firstArrivalS * 1000 - allocatedAtMs).toFixed(0)} ms`);

    // The same test on one host writes the same files.
    const localDir = join(workDirectory, 'local');
    const local = startCli(routeArgs(localDir));
    expect((await local.done).code, local.stderr().slice(-2000)).toBe(0);
    expect(filesOf(slurmDir)).toEqual(filesOf(localDir));
    // On one host the column is there and empty.
    const localCsv = readFileSync(join(localDir, 'requests.csv'), 'utf8').trim().split('\n');
    expect(localCsv[0]?.split(',').at(-1)).toBe('host_node');
    expect(localCsv.slice(1).every((line) => line.endsWith(','))).toBe(true);
  }, 240_000);

  it('sends the load from two load generators placed by Slurm on the nodes without a server, their clocks measured, no record lost', async () => {
    const allocation = await cluster.allocate(4);
    const outputDir = join(workDirectory, 'generators');
    const run = startCli([...routeArgs(outputDir), '--launcher', 'slurm', '--client-nodes', '2'], { env: allocation.env });
    try {
      expect((await run.done).code, run.stderr().slice(-2000)).toBe(0);
    } finally {
      run.child.kill('SIGKILL');
    }
    expect(await cluster.runningSteps()).toEqual([]);
    expect(readFileSync(join(outputDir, 'requests.jsonl'), 'utf8').trim().split('\n')).toHaveLength(NUM_PROMPTS);
    // Servers on n1-n3 (the router beside server 0); the generators on the free node n4 first, then from the last back.
    for (const [log, node] of [['load-generator-0', 'n4'], ['load-generator-1', 'n3'], ['router', 'n1']]) {
      expect(readFileSync(join(outputDir, 'logs', `${log}.log`), 'utf8')).toMatch(new RegExp(`# servelab: step \\d+\\.\\d+ on node ${node}`));
    }
    const summary = JSON.parse(readFileSync(join(outputDir, 'summary.json'), 'utf8')) as { extras?: { loadGenerators?: { clock?: { uncertaintyMs?: number } }[] } };
    expect(summary.extras?.loadGenerators).toHaveLength(2);
  }, 240_000);

  it('applies a failure schedule to servers on other nodes: hang, crash and restore through their steps, each event naming the node', async () => {
    const allocation = await cluster.allocate(3);
    const outputDir = join(workDirectory, 'failures');
    const schedule = JSON.stringify([
      { atS: 2, action: 'hang', nodes: [2] },
      { atS: 3, action: 'restore', nodes: [2] },
      { atS: 4, action: 'crash', nodes: [1] },
      { atS: 6, action: 'restore', nodes: [1] },
    ]);
    const run = startCli([...routeArgs(outputDir), '--launcher', 'slurm', '--failure-schedule', schedule], { env: allocation.env });
    try {
      const exit = await run.done;
      expect(exit.code, run.stderr().slice(-2000)).toBe(0);
    } finally {
      run.child.kill('SIGKILL');
    }
    expect(await cluster.runningSteps()).toEqual([]);
    const summary = JSON.parse(readFileSync(join(outputDir, 'summary.json'), 'utf8')) as { events?: { kind: string; node?: number; detail?: string }[] };
    const events = (summary.events ?? []).map((event) => [event.kind, event.node, /^on node [^\s:]+/.exec(event.detail ?? '')?.[0]]);
    expect(events).toEqual([
      ['hang', 2, 'on node n3'],
      ['restore', 2, 'on node n3'],
      ['crash', 1, 'on node n2'],
      ['restore', 1, 'on node n2'],
    ]);
    expect(readFileSync(join(outputDir, 'requests.jsonl'), 'utf8').trim().split('\n')).toHaveLength(NUM_PROMPTS);
    // The relaunched server is a new step on the same node: its log names two steps, both on n2.
    const steps = [...readFileSync(join(outputDir, 'logs', 'node-1.log'), 'utf8').matchAll(/# servelab: step (\d+\.\d+) on node (\S+)/g)];
    expect(steps.map((match) => match[2])).toEqual(['n2', 'n2']);
    expect(steps[0]?.[1]).not.toBe(steps[1]?.[1]);
  }, 240_000);

  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    it(`leaves no step running when servelab gets ${signal} mid-run`, async () => {
      const allocation = await cluster.allocate(3);
      const outputDir = join(workDirectory, `signal-${signal}`);
      const run = startCli([...routeArgs(outputDir), '--launcher', 'slurm'], { env: allocation.env });
      try {
        expect(await waitFor(async () => (existsSync(join(outputDir, 'requests.jsonl')) && (await cluster.runningSteps()).length >= 4 ? true : undefined), 60_000), run.stderr()).toBe(true);
        run.child.kill(signal);
        await run.done;
      } finally {
        run.child.kill('SIGKILL');
      }
      // SIGTERM: servelab stops its steps itself. SIGKILL: its watchdog kills each srun, and Slurm ends a step whose srun is gone.
      const left = await waitFor(async () => ((await cluster.runningSteps()).length === 0 ? [] : undefined), 30_000);
      expect(left ?? (await cluster.runningSteps())).toEqual([]);
    }, 120_000);
  }

  it('launches a multi-node SGLang server (stand-in python): every rank with --nnodes, --node-rank and one --dist-init-addr, only rank 0 behind the router', async () => {
    const allocation = await cluster.allocate(3);
    const outputDir = join(workDirectory, 'nnodes');
    const recordPath = join(workDirectory, 'stand-in-calls.jsonl');
    const standIns = fileURLToPath(new URL('../../fixtures/stand-ins/', import.meta.url));
    const basePort = await freePortRun(3);
    const run = startCli(
      ['route', '--target', 'sglang', '--model-path', 'meta-llama/Meta-Llama-3-8B-Instruct', '--launcher', 'slurm', '--nnodes', '3', '--num-gpus', '1', '--base-port', String(basePort),
        '--num-prompts', '20', '--request-rate', '20', '--random-input-len', '16', '--random-output-len', '8', '--output-dir', outputDir, '--progress', 'off'],
      { env: { ...allocation.env, PATH: `${standIns}${delimiter}${process.env['PATH'] ?? ''}`, STANDIN_MODE: 'ready', STANDIN_RECORD: recordPath, STANDIN_SERVELAB_CLI: cliPath, STANDIN_PROFILE: fastProfile } },
    );
    try {
      expect((await run.done).code, run.stderr().slice(-2000)).toBe(0);
    } finally {
      run.child.kill('SIGKILL');
    }
    expect(await cluster.runningSteps()).toEqual([]);
    const calls = readFileSync(recordPath, 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { args: string[] }).args);
    const value = (args: string[], flag: string): string | undefined => args[args.indexOf(flag) + 1];
    const ranks = calls.map((args) => [value(args, '--nnodes'), value(args, '--node-rank'), value(args, '--dist-init-addr')]).sort();
    const address = ranks[0]?.[2];
    expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(ranks).toEqual([
      ['3', '0', address],
      ['3', '1', address],
      ['3', '2', address],
    ]);
    // Each rank ran on its own node: its log names the step's node.
    for (const [rank, node] of [['rank-1', 'n2'], ['rank-2', 'n3']]) {
      expect(readFileSync(join(outputDir, 'logs', `node-0-${rank}.log`), 'utf8')).toMatch(new RegExp(`# servelab: step \\d+\\.\\d+ on node ${node}`));
    }
    expect(readFileSync(join(outputDir, 'logs', 'node-0.log'), 'utf8')).toMatch(/# servelab: step \d+\.\d+ on node n1/);
    // One server behind the router: rank 0's URL.
    const summary = JSON.parse(readFileSync(join(outputDir, 'summary.json'), 'utf8')) as { extras?: { cluster?: { serverUrls?: string[]; serverNodes?: string[] } } };
    expect(summary.extras?.cluster?.serverUrls).toEqual([`http://127.0.0.1:${basePort}`]);
    expect(summary.extras?.cluster?.serverNodes).toEqual(['n1']);
  }, 180_000);

  it('runs a node test\'s server on the allocation\'s first node', async () => {
    const allocation = await cluster.allocate(2);
    const outputDir = join(workDirectory, 'node-test');
    const run = startCli(['node', '--launcher', 'slurm', '--request-rate', '40', '--num-prompts', '40', '--random-input-len', '16', '--random-output-len', '8', '--profile', fastProfile, '--output-dir', outputDir, '--progress', 'off'], { env: allocation.env });
    try {
      expect((await run.done).code, run.stderr().slice(-2000)).toBe(0);
    } finally {
      run.child.kill('SIGKILL');
    }
    expect(await cluster.runningSteps()).toEqual([]);
    const records = readFileSync(join(outputDir, 'requests.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { host_node?: string });
    expect(records).toHaveLength(40);
    // The direct case: every record names the server's node.
    expect(records.every((record) => record.host_node === 'n1')).toBe(true);
    const log = readdirSync(join(outputDir, 'logs')).find((name) => name.endsWith('.log') && readFileSync(join(outputDir, 'logs', name), 'utf8').includes('# servelab: step'));
    expect(log).toBeDefined();
    expect(readFileSync(join(outputDir, 'logs', log as string), 'utf8')).toMatch(/# servelab: step \d+\.\d+ on node n1/);
  }, 120_000);

  it('leaves no step running when the servers fail to get ready on their nodes', async () => {
    const allocation = await cluster.allocate(3);
    const outputDir = join(workDirectory, 'start-fails');
    const standIns = fileURLToPath(new URL('../../fixtures/stand-ins/', import.meta.url));
    // Three servers whose stand-in SGLang loads for ever: the ready timeout ends the start-up, and every step must go.
    const run = startCli(
      ['route', '--target', 'sglang', '--model-path', 'meta-llama/Meta-Llama-3-8B-Instruct', '--launcher', 'slurm', '--num-gpus', '3', '--base-port', String(await freePortRun(3)),
        '--ready-timeout', '4', '--num-prompts', '5', '--output-dir', outputDir, '--progress', 'off'],
      { env: { ...allocation.env, PATH: `${standIns}${delimiter}${process.env['PATH'] ?? ''}`, STANDIN_MODE: 'never-ready' } },
    );
    try {
      // The three steps run (loading) before the timeout.
      expect(await waitFor(async () => ((await cluster.runningSteps()).length >= 3 ? true : undefined), 30_000), run.stderr()).toBe(true);
      const exit = await run.done;
      expect(exit.code).not.toBe(0);
      expect(run.stderr()).toContain('did not get ready within 4 s');
    } finally {
      run.child.kill('SIGKILL');
    }
    expect(await cluster.runningSteps()).toEqual([]);
  }, 120_000);
});
