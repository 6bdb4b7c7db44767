import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

let workDirectory: string;
/** A login node: no allocation around the command. */
const outside: NodeJS.ProcessEnv = { SLURM_JOB_ID: '' };

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-slurm-dry-run-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

describe('--launcher slurm --dry-run', () => {
  it('prints the batch script of a node test and submits nothing', async () => {
    const outputDir = join(workDirectory, 'node run');
    const result = await runCli(['node', '--launcher', 'slurm', '--num-prompts', '5', '--slurm-partition', 'gpu', '--slurm-arg', '--exclusive', '--output-dir', outputDir, '--dry-run'], { env: outside, cwd: workDirectory });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^#!\/bin\/bash\n#SBATCH --job-name="servelab-/);
    expect(result.stdout).toContain('#SBATCH --partition="gpu"\n#SBATCH "--exclusive"\n');
    expect(result.stdout).toContain(`"outputDir": "${outputDir}"`);
    expect(result.stdout).toMatch(/\nexec '[^']+' '[^']+main\.js' run '[^']+settings\.json'\n$/);
    expect(await readdir(workDirectory)).toEqual([]);
  });

  it('prints the script of a routing test, and of a `servelab run` file that asks for Slurm', async () => {
    const route = await runCli(['route', '--launcher', 'slurm', '--num-gpus', '12', '--gpus-per-node', '4', '--slurm-time', '30', '--dry-run'], { env: outside, cwd: workDirectory });
    expect(route.code).toBe(0);
    expect(route.stdout).toContain('#SBATCH --nodes=3\n#SBATCH --time="30"\n#SBATCH --signal=B:TERM@120\n');
    const file = join(workDirectory, 'routing.yaml');
    await writeFile(file, 'test: routing\nlauncher: slurm\nnum_gpus: 2\nslurm_account: lab\nslurm_args: ["--gres=gpu:2"]\n');
    const run = await runCli(['run', file, '--dry-run'], { env: outside, cwd: workDirectory });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('#SBATCH --account="lab"\n#SBATCH "--gres=gpu:2"\n');
    expect(run.stdout).toContain('"test": "routing"');
    expect(existsSync(join(workDirectory, 'results'))).toBe(false);
  });

  it('prints every grid point\'s script for a sweep as jobs', async () => {
    const sweepFile = join(workDirectory, 'sweep.json');
    await writeFile(sweepFile, JSON.stringify({ test: 'node', settings: { numPrompts: 10 }, grid: { requestRate: [5, 10] } }));
    const sweepDir = join(workDirectory, 'sweep-out');
    const result = await runCli(['sweep', sweepFile, '--launcher', 'slurm', '--max-parallel', '3', '--slurm-partition', 'gpu', '--output-dir', sweepDir, '--dry-run'], { env: outside, cwd: workDirectory });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^# at most 3 of these jobs at once \(--max-parallel\)\n# ===== grid point 1\/2: requestRate=5 =====\n#!\/bin\/bash\n/);
    expect(result.stdout).toContain('# ===== grid point 2/2: requestRate=10 =====\n#!/bin/bash\n');
    expect(result.stdout.match(/#SBATCH --partition="gpu"/g)).toHaveLength(2);
    expect(result.stdout).toContain(`"outputDir": "${join(sweepDir, 'runs', 'requestRate=10')}"`);
    expect(existsSync(sweepDir)).toBe(false);
  });

  it('without a reachable Slurm, says sbatch refused the job and leaves nothing behind', async () => {
    const empty = await mkdtemp(join(workDirectory, 'no-slurm-'));
    // A configuration whose controller listens nowhere (port 9, discard, is closed on loopback): sbatch cannot submit.
    const conf = join(workDirectory, 'unreachable.conf');
    await writeFile(conf, 'ClusterName=none\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=9\n');
    const result = await runCli(['node', '--launcher', 'slurm', '--num-prompts', '5', '--output-dir', join(empty, 'run')], { env: { ...outside, SLURM_CONF: conf }, cwd: empty, timeoutMs: 90_000 });
    expect(result.code).toBe(1);
    // sbatch present but no controller to reach, or Slurm's client commands not installed at all.
    expect(result.stderr).toMatch(/servelab: (sbatch refused the job \(exit 1\): .*\nnothing was submitted; check that this host reaches the Slurm controller|sbatch is not installed or not on PATH)/);
    expect(await readdir(empty)).toEqual([]);
  }, 120_000);

  it('names the default time limit in --help', async () => {
    const help = await runCli(['node', '--help']);
    expect(help.stdout).toMatch(/--slurm-time <limit>[\s\S]*never unlimited[\s\S]*\(default: 1:00:00\)/);
  });

  it('is refused where nothing would be submitted: without --launcher slurm, or inside an allocation', async () => {
    const local = await runCli(['node', '--dry-run'], { env: outside });
    expect(local.code).toBe(2);
    expect(local.stderr).toMatch(/--dry-run prints the batch script a --launcher slurm run submits from a login node; add --launcher slurm/);
    const inside = await runCli(['node', '--launcher', 'slurm', '--dry-run'], { env: { SLURM_JOB_ID: '42' } });
    expect(inside.code).toBe(2);
    expect(inside.stderr).toMatch(/inside an allocation \(SLURM_JOB_ID is set\)/);
  });
});
