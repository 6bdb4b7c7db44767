import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insideSlurmAllocation, readSlurmAllocation } from '../../../src/cluster/placement/slurm/slurm-allocation.js';
import { openSlurmPlacement, type SlurmPlacement } from '../../../src/cluster/placement/slurm/slurm-placement.js';
import type { ServelabError } from '../../../src/errors/servelab-error.js';
import { RoutingTest } from '../../../src/index.js';
import { slurmMissing, startSlurmCluster, type SlurmAllocation, type SlurmTestCluster } from '../../helpers/slurm-cluster.js';
import { placementConformance } from './placement-conformance.js';

describe.skipIf(slurmMissing() !== undefined)('the Slurm placement', () => {
  let cluster: SlurmTestCluster;
  let allocation: SlurmAllocation;
  let placement: SlurmPlacement;
  beforeAll(async () => {
    cluster = await startSlurmCluster(3);
    allocation = await cluster.allocate(3);
    placement = await openSlurmPlacement(allocation.env);
  }, 60_000);
  afterAll(async () => {
    // Every test stopped what it started: no step may be left in the allocation.
    const left = cluster === undefined ? [] : await cluster.runningSteps();
    await cluster?.stop();
    expect(left).toEqual([]);
  }, 60_000);

  placementConformance('slurm (the allocation\'s first node)', () => placement);
  placementConformance('slurm (node n2)', () => placement, 'n2');

  it('reads the allocation\'s nodes and their addresses from Slurm', () => {
    expect(placement.nodes).toEqual(['n1', 'n2', 'n3']);
    expect(placement.hostOf('n3')).toBe('127.0.0.1');
    expect(placement.hostOf()).toBe('127.0.0.1');
  });

  it('runs a step on the node asked for, named by its step id', async () => {
    const child = placement.spawn({ name: 'where-probe', command: 'sh', args: ['-c', 'echo "on $SLURMD_NODENAME in $SLURM_JOB_ID"'], node: 'n3' });
    const [line] = await child.waitForLine(/^on \S+ in \d+$/, 15_000, 'say where it runs');
    expect(line).toBe(`on n3 in ${allocation.jobId}`);
    await child.exited;
    expect(child.id).toMatch(new RegExp(`^step ${allocation.jobId}\\.\\d+$`));
    await child.stop();
  });

  it('gives the process the GPUs servelab chose, over the CUDA_VISIBLE_DEVICES Slurm sets in a step', async () => {
    // A cluster whose steps get CUDA_VISIBLE_DEVICES from Slurm, as steps holding GPUs do.
    const gpuCluster = await startSlurmCluster(1, { stepGpus: '0,1,2,3,4,5,6,7' });
    try {
      const gpuPlacement = await openSlurmPlacement((await gpuCluster.allocate(1)).env);
      const gpusOf = async (env: Record<string, string> | undefined): Promise<string> => {
        const child = gpuPlacement.spawn({ name: 'gpu-probe', command: 'sh', args: ['-c', 'echo "gpus $CUDA_VISIBLE_DEVICES"'], ...(env === undefined ? {} : { env }) });
        const [line] = await child.waitForLine(/^gpus .*$/, 15_000, 'print its GPUs');
        await child.stop();
        return line;
      };
      expect(await gpusOf(undefined)).toBe('gpus 0,1,2,3,4,5,6,7');
      expect(await gpusOf({ CUDA_VISIBLE_DEVICES: '2,3' })).toBe('gpus 2,3');
    } finally {
      await gpuCluster.stop();
    }
  }, 60_000);

  it('crashes, hangs and resumes a step by signal, and reports the signal that ended it', async () => {
    const ticker = 'let n = 0; setInterval(() => console.log("tick " + n++), 50);';
    const child = placement.spawn({ name: 'signal-probe', command: process.execPath, args: ['-e', ticker], node: 'n2' });
    try {
      await child.waitForLine(/^tick 2$/, 15_000, 'tick');
      child.signal('SIGSTOP');
      // Once stopped, the ticks stop: the last tick seen stays the last for a while after the stop took effect.
      const lastTick = (): number => Number(/tick (\d+)\s*$/.exec(child.logTail())?.[1] ?? -1);
      let stopped = -1;
      for (let tries = 0; tries < 100; tries += 1) {
        const before = lastTick();
        await new Promise((resolve) => setTimeout(resolve, 300));
        if (lastTick() === before) {
          stopped = before;
          break;
        }
      }
      expect(stopped).toBeGreaterThanOrEqual(2);
      child.signal('SIGCONT');
      await child.waitForLine(new RegExp(`^tick ${stopped + 1}$`), 15_000, 'tick again');
      child.signal('SIGKILL');
      expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
    } finally {
      await child.stop();
    }
  });

  it('refuses a node outside the allocation, naming the allocation\'s nodes', () => {
    let error: unknown;
    try {
      placement.spawn({ name: 'elsewhere', command: 'true', args: [], node: 'gpu-node-17' });
    } catch (caught) {
      error = caught;
    }
    expect((error as ServelabError).code).toBe('INVALID_CONFIG');
    expect((error as Error).message).toContain('gpu-node-17');
    expect((error as Error).message).toContain('n1, n2, n3');
  });

  it('refuses an allocation without a time limit, saying how to set one', async () => {
    const unlimited = await cluster.allocate(1, null);
    try {
      const error: unknown = await readSlurmAllocation(unlimited.env).catch((caught: unknown) => caught);
      expect((error as ServelabError).code).toBe('INVALID_CONFIG');
      expect((error as Error).message).toContain('salloc --time');
    } finally {
      await cluster.command('scancel', [unlimited.jobId]);
    }
  });

  it('runs a library routing test whose servers it places on named nodes', async () => {
    const outputDir = await mkdtemp(join(tmpdir(), 'servelab-slurm-library-'));
    try {
      const profile = fileURLToPath(new URL('../../fixtures/profiles/simple-2ms.json', import.meta.url));
      const test = new RoutingTest({ numGpus: 2, requestRate: 100, numPrompts: 20, randomInputLen: 16, randomOutputLen: 4, profile, outputDir, warmupRequests: 0, progress: 'off' });
      const result = await test.run({ placement, serverNodes: ['n3', 'n2'] });
      expect(result.status).toBe('completed');
      expect(result.run.records.every((record) => record.success)).toBe(true);
      expect((result.run.extras?.['cluster'] as { serverNodes?: string[] }).serverNodes).toEqual(['n3', 'n2']);
    } finally {
      await rm(outputDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('says what to do outside an allocation', async () => {
    const outside = { ...allocation.env };
    delete outside['SLURM_JOB_ID'];
    expect(insideSlurmAllocation(outside)).toBe(false);
    expect(insideSlurmAllocation(allocation.env)).toBe(true);
    const error: unknown = await readSlurmAllocation(outside).catch((caught: unknown) => caught);
    expect((error as ServelabError).code).toBe('INVALID_CONFIG');
    expect((error as Error).message).toContain('salloc');
  });
});
