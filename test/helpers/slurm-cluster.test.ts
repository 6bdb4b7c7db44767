import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { slurmMissing, startSlurmCluster } from './slurm-cluster.js';
import { isAlive } from './cli.js';

const run = promisify(execFile);

describe.skipIf(slurmMissing() !== undefined)('the test Slurm cluster', () => {
  it('runs steps on each of its nodes, two clusters side by side, and leaves nothing behind', async () => {
    const startedMs = Date.now();
    const [first, second] = await Promise.all([startSlurmCluster(3), startSlurmCluster(2)]);
    // A figure for docs/slurm.md, not an assertion: the machine may be loaded.
    console.log(`two test clusters (3 and 2 nodes) up side by side in ${Date.now() - startedMs} ms`);
    const daemonPids: number[] = [];
    try {
      expect(first.nodes).toEqual(['n1', 'n2', 'n3']);
      expect(first.confPath).not.toBe(second.confPath);
      const allocation = await first.allocate(3);
      expect(allocation.nodeList).toBe('n[1-3]');
      const { stdout } = await run('srun', ['--overlap', '--jobid', allocation.jobId, '--nodelist', 'n2', '--ntasks', '1', 'sh', '-c', 'echo "$SLURMD_NODENAME $SLURM_JOB_ID"'], { env: allocation.env });
      expect(stdout.trim()).toBe(`n2 ${allocation.jobId}`);
      const other = await second.allocate(2);
      expect(other.nodeList).toBe('n[1-2]');
      // A step started in the background is still listed until the teardown ends it.
      const step = execFile('srun', ['--overlap', '--jobid', allocation.jobId, '--nodelist', 'n3', '--ntasks', '1', 'sleep', '300'], { env: allocation.env });
      const stepEnded = new Promise((resolve) => step.once('exit', resolve));
      for (let tries = 0; tries < 100 && (await first.runningSteps()).length === 0; tries += 1) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await first.runningSteps()).toEqual([`${allocation.jobId}.1`]);
      for (const file of ['slurmctld.pid', 'slurmd-n1.pid', 'slurmd-n2.pid', 'slurmd-n3.pid']) daemonPids.push(Number(await readFile(join(first.directory, file), 'utf8')));
      expect(daemonPids.every(isAlive)).toBe(true);
      await first.stop();
      await stepEnded;
      expect(daemonPids.some(isAlive)).toBe(false);
      expect(existsSync(first.directory)).toBe(false);
      // The other cluster still answers.
      expect((await second.command('sinfo', ['--noheader', '--format=%D'])).trim()).toBe('2');
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
  }, 120_000);
});
