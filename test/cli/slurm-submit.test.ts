import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startCli } from '../helpers/cli.js';
import { slurmMissing, startSlurmCluster, type SlurmTestCluster } from '../helpers/slurm-cluster.js';

const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
const smallRun = ['--random-input-len', '32', '--random-output-len', '8', '--profile', fastProfile, '--client-nodes', '0'];
let cluster: SlurmTestCluster;
let workDirectory: string;
/** A login node of the test cluster: Slurm's commands reach it, and no allocation is around the command. */
let loginEnv: NodeJS.ProcessEnv;

async function filesUnder(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => relative(directory, join(entry.parentPath, entry.name))).sort();
}

/** Jobs the controller still counts as alive (pending, running, completing). */
async function liveJobs(): Promise<string> {
  return (await cluster.command('squeue', ['--noheader', '--format=%i %T'])).trim();
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.skipIf(slurmMissing() !== undefined)('--launcher slurm from a login node (sbatch) on the test cluster', () => {
  beforeAll(async () => {
    cluster = await startSlurmCluster(3);
    workDirectory = await mkdtemp(join(tmpdir(), 'servelab-slurm-submit-'));
    loginEnv = { ...cluster.env, SLURM_JOB_ID: '' };
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    await rm(workDirectory, { recursive: true, force: true });
  });

  it('submits a node test, relays its progress and summary, and ends with the files a local run has', async () => {
    const settings = ['--num-prompts', '20', '--request-rate', '20', '--seed', '3', ...smallRun];
    const submittedDir = join(workDirectory, 'submitted');
    const localDir = join(workDirectory, 'local');
    const [submitted, local] = await Promise.all([
      runCli(['node', '--launcher', 'slurm', ...settings, '--output-dir', submittedDir], { env: loginEnv, cwd: workDirectory, timeoutMs: 150_000 }),
      runCli(['node', ...settings.filter((flag, index, all) => flag !== '--client-nodes' && all[index - 1] !== '--client-nodes'), '--output-dir', localDir], { cwd: workDirectory, timeoutMs: 150_000 }),
    ]);
    expect(submitted.stderr).toMatch(/servelab: submitted job (\d+) \(sbatch\)/);
    expect(submitted.stderr).toMatch(/servelab: job \d+ RUNNING on n1/);
    // The coordinator's own progress lines and summary, relayed from the job's output.
    expect(submitted.stderr).toMatch(/\n20\/20 done \(100%\), 20 sent, 0 in flight/);
    expect(submitted.stdout).toContain(`results: ${submittedDir}`);
    expect(submitted.stderr).toMatch(/job \d+ ended COMPLETED, exit status 0; submit to running [\d.]+ s, submit to the run's t0 \(its first request's schedule origin\) [\d.]+ s/);
    expect(submitted.code).toBe(0);
    expect(local.code).toBe(0);
    const submittedFiles = await filesUnder(submittedDir);
    expect(submittedFiles.filter((file) => !file.startsWith('logs/slurm-job/'))).toEqual(await filesUnder(localDir));
    expect(submittedFiles.filter((file) => file.startsWith('logs/slurm-job/'))).toEqual(['logs/slurm-job/job.sbatch', 'logs/slurm-job/settings.json', 'logs/slurm-job/slurm-job.err', 'logs/slurm-job/slurm-job.out']);
    const summary = JSON.parse(await readFile(join(submittedDir, 'summary.json'), 'utf8')) as { run: { status: string }; metrics: { counts: { succeeded: number } } };
    expect(summary.run.status).toBe('completed');
    expect(summary.metrics.counts.succeeded).toBe(20);
    expect(existsSync(join(workDirectory, '.submitted.slurm-job'))).toBe(false);
    expect(await liveJobs()).toBe('');
  }, 180_000);
});
