import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startCli } from '../helpers/cli.js';
import { slurmMissing, startSlurmCluster, type SlurmTestCluster } from '../helpers/slurm-cluster.js';

const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
const smallRun = ['--random-input-len', '32', '--random-output-len', '8', '--profile', fastProfile];
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

/** Waits for `condition`; on giving up, says what it waited for and what `seen` shows then (the CLI's stderr). */
async function until(condition: () => boolean | Promise<boolean>, what: string, seen: () => string | Promise<string> = () => '', timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}; seen:\n${(await seen()).slice(-3000)}`);
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
      runCli(['node', ...settings, '--output-dir', localDir], { cwd: workDirectory, timeoutMs: 150_000 }),
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

  /** The long runs started; a test that fails before it stops its own leaves it to afterEach. */
  const longRuns: ReturnType<typeof startCli>[] = [];
  afterEach(() => {
    // SIGKILL: servelab's job watchdog then cancels its job (the SIGKILL test shows it), and no CLI outlives the test.
    for (const run of longRuns.splice(0)) if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
  });

  /** A run long enough to be stopped mid-way: 3,000 requests at 20 req/s (150 s of load). */
  const startLongRun = (name: string): { run: ReturnType<typeof startCli>; outputDir: string; jobId: () => string | undefined } => {
    const outputDir = join(workDirectory, name);
    const run = startCli(['node', '--launcher', 'slurm', '--num-prompts', '3000', '--request-rate', '20', ...smallRun, '--output-dir', outputDir], { env: loginEnv, cwd: workDirectory });
    longRuns.push(run);
    return { run, outputDir, jobId: () => /submitted job (\d+)/.exec(run.stderr())?.[1] };
  };
  const measuring = (run: ReturnType<typeof startCli>): boolean => /\d+\/3000 done/.test(run.stderr());

  it('says so when the job is cancelled mid-run by someone else, and leaves no job', async () => {
    const { run, jobId } = startLongRun('cancelled');
    await until(() => measuring(run), 'the submitted run to send requests');
    await cluster.command('scancel', [jobId() as string]);
    const { code } = await run.done;
    expect(run.stderr()).toMatch(new RegExp(`servelab: job ${jobId()} was CANCELLED \\(not by this servelab: scancel, or an administrator\\), exit status 1\\d\\d`));
    expect(code).toBeGreaterThanOrEqual(128);
    expect(await liveJobs()).toBe('');
  }, 150_000);

  it('on Ctrl-C tells the coordinator to stop, which writes what it measured, and exits 130 with no job left', async () => {
    const { run, outputDir, jobId } = startLongRun('interrupted');
    await until(() => measuring(run), 'the submitted run to send requests');
    run.child.kill('SIGINT');
    const { code } = await run.done;
    expect(run.stderr()).toMatch(new RegExp(`servelab: SIGINT received: telling job ${jobId()} to stop and write what it measured`));
    expect(run.stderr()).toMatch(/job \d+ ended \w+, exit status 143/);
    expect(code).toBe(130);
    const summary = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as { run: { status: string } };
    expect(summary.run.status).toBe('interrupted');
    expect(await liveJobs()).toBe('');
  }, 150_000);

  it('when servelab itself is killed (SIGKILL), its job watchdog cancels the job', async () => {
    const { run, jobId } = startLongRun('killed');
    await until(() => jobId() !== undefined && /RUNNING/.test(run.stderr()), 'the job to run');
    run.child.kill('SIGKILL');
    await run.done;
    await until(async () => (await liveJobs()) === '', `job ${jobId()} to leave the queue`, () => run.stderr(), 30_000);
  }, 150_000);

  it('before the time limit, Slurm\'s early warning makes the coordinator write what it measured and stop', async () => {
    // A three-minute limit: the warning (SIGTERM to the batch step) is asked for 90 s before it, and sbatch(1) says
    // Slurm may send it up to 60 s earlier still, so it comes 30-90 s into the job: after the start-up, before the
    // 150 s the run would need. (With a one-minute limit it once came 2 s in, during the start-up, which then says
    // that nothing was measured and writes no summary.)
    const outputDir = join(workDirectory, 'time-limited');
    const run = startCli(['node', '--launcher', 'slurm', '--slurm-time', '3', '--num-prompts', '3000', '--request-rate', '20', ...smallRun, '--output-dir', outputDir], { env: loginEnv, cwd: workDirectory });
    const { code } = await run.done;
    expect(run.stderr()).toMatch(/servelab: job \d+ ended FAILED, exit status 143/);
    expect(code, run.stderr().slice(-3000)).toBe(143);
    expect(run.stderr(), 'the warning came during the start-up').not.toMatch(/nothing was measured/);
    const summary = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as { run: { status: string }; metrics: { counts: { total: number } } };
    expect(summary.run.status).toBe('interrupted');
    expect(summary.metrics.counts.total).toBeGreaterThan(0);
    expect(await readFile(join(outputDir, 'logs', 'slurm-job', 'job.sbatch'), 'utf8')).toContain('#SBATCH --signal=B:TERM@90\n');
    expect(await liveJobs()).toBe('');
  }, 240_000);

  it('on Ctrl-C while the job waits in the queue, cancels it: nothing ran, nothing is left', async () => {
    // Every node held by another allocation: the submitted job waits (PENDING, Resources).
    // --exclusive: an allocation of one CPU a node left the submitted job room beside it, and the test passed only when
    // it caught the job's moment of PENDING before the scheduler started it (in one clean CI run it never did).
    const holder = await cluster.allocate(3, 10, { exclusive: true });
    try {
      const { run, jobId } = startLongRun('pending');
      await until(() => /job \d+ PENDING/.test(run.stderr()), 'the job to wait in the queue', async () => `${run.stderr()}\nqueue: ${await liveJobs()}`);
      // Waiting because the scheduler looked and found no room (reason Resources), not only because it had not looked yet.
      const reason = async (): Promise<string> => (await cluster.command('squeue', ['--noheader', '--jobs', jobId() as string, '--format=%T %r'])).trim();
      await until(async () => (await reason()) === 'PENDING Resources', 'the scheduler to find no room for the job', reason, 30_000);
      run.child.kill('SIGINT');
      const { code } = await run.done;
      expect(run.stderr()).toContain(`servelab: SIGINT received: cancelling job ${jobId()}, which has not started`);
      expect(run.stderr()).toMatch(new RegExp(`servelab: job ${jobId()} ended CANCELLED, exit status 1\\. job script and output: .*\\.pending\\.slurm-job`));
      expect(code).toBe(130);
      expect(existsSync(join(workDirectory, 'pending'))).toBe(false);
      expect(await liveJobs()).toBe(`${holder.jobId} RUNNING`);
    } finally {
      await cluster.command('scancel', [holder.jobId]);
    }
  }, 150_000);
});
