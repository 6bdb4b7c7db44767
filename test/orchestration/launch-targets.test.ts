import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeTest, RoutingTest, ServelabError } from '../../src/index.js';
import { builtinTargets, loadTargetLauncher } from '../../src/orchestration/launch-targets/registry.js';
import { roundRobinNodes } from '../../src/orchestration/launch-targets/target-launcher.js';
import { isAlive, pidFromLog } from '../helpers/cli.js';
import { launched } from '../fixtures/targets/sim-on-localhost.js';

const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
const customTarget = fileURLToPath(new URL('../fixtures/targets/sim-on-localhost.ts', import.meta.url));
let workDirectory: string;

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-targets-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

async function failure(work: Promise<unknown>): Promise<ServelabError> {
  const error: unknown = await work.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ServelabError);
  return error as ServelabError;
}

describe('the target registry', () => {
  it('gives the builtin targets by name, each saying how it behaves', async () => {
    expect(Object.keys(builtinTargets).sort()).toEqual(['attach', 'sglang', 'sim']);
    expect((await loadTargetLauncher('sim')).unmodelledColumns).toEqual(['tokenize_time']);
    expect((await loadTargetLauncher('sglang')).unmodelledColumns).toEqual([]);
    expect((await loadTargetLauncher('sim')).serversReportOnThemselves).toBe(true);
    expect((await loadTargetLauncher('attach')).attachedRouterUrl?.({ url: 'http://127.0.0.1:1' } as never)).toBe('http://127.0.0.1:1');
  });

  it('loads a name that is not built in as a module path, and says clearly when it does not load', async () => {
    const error = await failure(loadTargetLauncher('sglnag'));
    expect(error.code).toBe('MODULE_LOAD_FAILED');
    expect(error.message).toContain('target "sglnag" is neither built in (sim, sglang, attach) nor a module that loads');
    expect(error.message).toContain('sglang');
  });

  it('refuses a module that loads but exports no target launcher, naming what it lacks', async () => {
    const error = await failure(loadTargetLauncher(fileURLToPath(new URL('../fixtures/targets/not-a-target.mjs', import.meta.url))));
    expect(error.code).toBe('MODULE_LOAD_FAILED');
    expect(error.message).toContain('exports no target launcher (it lacks launchNode, launchClusterNode, describeNodeStart, describeClusterStart)');
  });

  it('stops a run with an unknown target before anything is launched or written', async () => {
    const outputDir = join(workDirectory, 'unknown-target');
    const test = new NodeTest({ target: './no/such/target.js', numPrompts: 4, profile: fastProfile, outputDir });
    const error = await failure(test.run());
    expect(error.code).toBe('MODULE_LOAD_FAILED');
    expect(error.message).toContain('./no/such/target.js');
    expect(existsSync(outputDir)).toBe(false);
  });

  it('runs a node test and a routing test on a target loaded from a module', async () => {
    launched.length = 0;
    const node = await new NodeTest({ target: customTarget, requestRate: 200, numPrompts: 12, randomInputLen: 16, randomOutputLen: 4, profile: fastProfile, outputDir: join(workDirectory, 'custom-node'), warmupRequests: 0 }).run();
    expect(node.status).toBe('completed');
    expect(node.run.records.every((record) => record.success)).toBe(true);
    expect(node.run.info.target).toBe(customTarget);
    expect(await readFile(join(workDirectory, 'custom-node', 'logs', 'custom-server.log'), 'utf8')).toContain('sim-server');
    const routing = await new RoutingTest({ target: customTarget, numGpus: 2, requestRate: 200, numPrompts: 12, randomInputLen: 16, randomOutputLen: 4, profile: fastProfile, outputDir: join(workDirectory, 'custom-routing'), warmupRequests: 0 }).run();
    expect(routing.status).toBe('completed');
    expect(routing.run.records.every((record) => record.success)).toBe(true);
    expect(launched).toEqual(['node', 'cluster 0', 'cluster 1']);
  });
});

describe('placing servers by node name', () => {
  it('puts server i on nodes[i % n], counting each node\'s servers for its GPU ids', () => {
    const serverNode = roundRobinNodes(['gpu-a', 'gpu-b']);
    expect([0, 1, 2, 3, 4].map((index) => serverNode(index))).toEqual([
      { node: 'gpu-a', indexOnNode: 0 },
      { node: 'gpu-b', indexOnNode: 0 },
      { node: 'gpu-a', indexOnNode: 1 },
      { node: 'gpu-b', indexOnNode: 1 },
      { node: 'gpu-a', indexOnNode: 2 },
    ]);
    expect(roundRobinNodes(undefined)(3)).toEqual({ node: undefined, indexOnNode: 3 });
  });

  it('runs a routing test whose servers are placed on this host by name', async () => {
    const outputDir = join(workDirectory, 'named-nodes');
    const result = await new RoutingTest({ numGpus: 2, requestRate: 200, numPrompts: 12, randomInputLen: 16, randomOutputLen: 4, profile: fastProfile, outputDir, warmupRequests: 0 }).run({ serverNodes: ['localhost', hostname()] });
    expect(result.status).toBe('completed');
    expect(new Set(result.run.records.map((record) => record.host)).size).toBe(2);
  });

  it('refuses a node the placement does not reach, naming it, and leaves no server running', async () => {
    const outputDir = join(workDirectory, 'unknown-node');
    const error = await failure(new RoutingTest({ numGpus: 2, numPrompts: 4, profile: fastProfile, outputDir }).run({ serverNodes: ['localhost', 'gpu-node-17'] }));
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toContain('gpu-node-17');
    const logs = join(outputDir, 'logs');
    const pids: number[] = [];
    for (const name of await readdir(logs)) {
      const pid = pidFromLog(await readFile(join(logs, name), 'utf8'));
      if (pid !== undefined) pids.push(pid);
    }
    // The server placed on localhost had started: it was stopped when its neighbour could not be placed.
    expect(pids).toHaveLength(1);
    expect(pids.every((pid) => !isAlive(pid))).toBe(true);
  });
});
