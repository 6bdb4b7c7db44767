import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli } from '../helpers/cli.js';
import { slurmMissing, startSlurmCluster, type SlurmTestCluster } from '../helpers/slurm-cluster.js';

const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
let cluster: SlurmTestCluster;
let workDirectory: string;

describe.skipIf(slurmMissing() !== undefined)('servelab sweep --launcher slurm from a login node', () => {
  beforeAll(async () => {
    cluster = await startSlurmCluster(3);
    workDirectory = await mkdtemp(join(tmpdir(), 'servelab-slurm-sweep-'));
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    await rm(workDirectory, { recursive: true, force: true });
  });

  it('runs each point as its own job, at most --max-parallel at once; a failed job is a failed point, not a failed sweep', async () => {
    const sweepFile = join(workDirectory, 'sweep.yaml');
    // The middle point's server cannot get ready within 1 ms: its job fails; the other two complete.
    await writeFile(sweepFile, JSON.stringify({
      test: 'node',
      settings: { numPrompts: 20, requestRate: 20, randomInputLen: 32, randomOutputLen: 8, profile: fastProfile },
      grid: { readyTimeoutS: [30, 0.001, 31] },
    }));
    const outputDir = join(workDirectory, 'out');
    const sweep = startCli(['sweep', sweepFile, '--launcher', 'slurm', '--max-parallel', '2', '--slurm-time', '10', '--output-dir', outputDir], { env: { ...cluster.env, SLURM_JOB_ID: '' }, cwd: workDirectory });
    // The controller's view while the sweep runs: never more than two of its jobs alive at once.
    let mostAlive = 0;
    let ended = false;
    void sweep.done.then(() => (ended = true));
    while (!ended) {
      const alive = (await cluster.command('squeue', ['--noheader', '--format=%i'])).split('\n').filter((line) => line.trim() !== '').length;
      mostAlive = Math.max(mostAlive, alive);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const { code } = await sweep.done;
    expect(sweep.stderr()).toMatch(/servelab sweep: run readyTimeoutS=0\.001 failed: job \d+ ended FAILED \(NonZeroExitCode\), exit status 1: /);
    expect(code).toBe(3);
    expect(mostAlive).toBe(2);
    const rows = (await readFile(join(outputDir, 'sweep.csv'), 'utf8')).trim().split('\n');
    expect(rows).toHaveLength(4);
    expect(rows[1]).toMatch(/^readyTimeoutS=30,30,completed,/);
    expect(rows[2]).toMatch(/^readyTimeoutS=0\.001,0\.001,failed,.*job \d+ ended FAILED/);
    expect(rows[3]).toMatch(/^readyTimeoutS=31,31,completed,/);
    for (const label of ['readyTimeoutS=30', 'readyTimeoutS=31']) {
      expect(existsSync(join(outputDir, 'runs', label, 'summary.json'))).toBe(true);
      expect(existsSync(join(outputDir, 'runs', label, 'logs', 'slurm-job', 'job.sbatch'))).toBe(true);
    }
    // The failed point's files are kept, its job's output with them.
    expect(existsSync(join(outputDir, 'runs', 'readyTimeoutS=0.001', 'logs', 'slurm-job', 'slurm-job.err'))).toBe(true);
    expect(existsSync(join(outputDir, 'compare.csv'))).toBe(true);
    expect((await cluster.command('squeue', ['--noheader'])).trim()).toBe('');
  }, 240_000);
});
