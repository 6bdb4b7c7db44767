import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ServelabError } from '../../errors/servelab-error.js';
import type { JobRequest } from './job-request.js';
import { buildJobScript } from './job-script.js';
import { JobOutputTail } from './job-output-tail.js';
import { cancelJob, exitStatusOf, hasEnded, queryJobState, type JobState } from './job-state.js';
import { unwatchJob, watchJob } from './job-watchdog.js';
import { runSlurmCommand } from './slurm-command.js';

export interface SubmittedRunOptions {
  /**
   * Aborting stops the run as Ctrl-C stops a local one: a pending job is cancelled; a running one's coordinator gets
   * SIGTERM (`scancel --batch`), writes what it measured and exits, and after `stopGraceMs` the job is cancelled.
   */
  signal?: AbortSignal;
  onSubmitted?: (jobId: string) => void;
  /** Each new state the follower sees (PENDING, RUNNING, ...). */
  onState?: (job: JobState, jobId: string) => void;
  /** New whole lines of the job's stdout (the coordinator's summary) and stderr (its progress and messages). */
  onOutput?: (text: string, stream: 'stdout' | 'stderr') => void;
  /** How often the controller is asked and the output read (default 1 s). */
  pollMs?: number;
  /** How long a told-to-stop coordinator may take to write before the job is cancelled (default 60 s). */
  stopGraceMs?: number;
  env?: NodeJS.ProcessEnv;
}

export interface SubmittedRun {
  jobId: string;
  runId: string;
  runDirectory: string;
  /** The last state seen; undefined when the controller forgot the job before its end was seen. */
  job?: JobState;
  /** The run's exit status: the coordinator's, or 128 + N for a signal (exitStatusOf). */
  exitStatus: number;
  /** Whether this process cancelled or stopped the job (an abort). */
  stoppedHere: boolean;
  /** Where the job's script, settings and output are now: the run's logs/slurm-job/ once the run made its directory. */
  jobFilesDirectory: string;
  submittedAtEpochS: number;
  /** When the follower first saw the job running (within one poll of the truth). */
  runningSeenAtEpochS?: number;
  endedSeenAtEpochS: number;
}

/** How long the controller may leave the follower unanswered before the run is given up (and its job cancelled). */
const CONTROLLER_SILENCE_MS = 120_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Submits one run as a batch job (`sbatch --parsable`), follows it to its end through the controller (`scontrol show
 * job`: accounting may be off), relays its output, and moves the job's own files into the run directory. The job is
 * registered with the job watchdog while it lives, so servelab's death cancels it.
 */
export async function submitAndFollow(request: JobRequest, options: SubmittedRunOptions = {}): Promise<SubmittedRun> {
  const pollMs = options.pollMs ?? 1_000;
  const script = buildJobScript(request.spec);
  await refuseUsedRunDirectory(request.runDirectory);
  await mkdir(request.jobDirectory, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
    throw new ServelabError('INVALID_CONFIG', `cannot create ${request.jobDirectory} (${error.code ?? error.message}); choose a writable --output-dir`, { cause: error });
  });
  const scriptPath = join(request.jobDirectory, 'job.sbatch');
  await writeFile(scriptPath, script, { mode: 0o600 });

  const submittedAtEpochS = Date.now() / 1000;
  const submitted = await runSlurmCommand('sbatch', ['--parsable', scriptPath], { env: options.env });
  // --parsable prints `JOBID` or `JOBID;CLUSTER`.
  const jobId = /^(\d+)(?:;\S+)?\s*$/.exec(submitted.stdout.trim())?.[1];
  if (submitted.code !== 0 || jobId === undefined) {
    // Nothing was queued: the job directory this call made goes too, so a refused submission leaves no trace.
    await rm(request.jobDirectory, { recursive: true, force: true });
    throw new ServelabError('SLURM_JOB_FAILED', `sbatch refused the job (exit ${String(submitted.code)}): ${submitted.stderr.trim() || submitted.stdout.trim() || 'no message'}`, {
      details: 'nothing was submitted; check that this host reaches the Slurm controller (sinfo answers; SLURM_CONF names its configuration), and the script with --dry-run',
    });
  }
  watchJob(jobId);
  options.onSubmitted?.(jobId);

  const tails = [
    { stream: 'stdout' as const, tail: new JobOutputTail(request.spec.outputPath) },
    { stream: 'stderr' as const, tail: new JobOutputTail(request.spec.errorPath) },
  ];
  const relay = async (final: boolean): Promise<void> => {
    for (const { stream, tail } of tails) {
      const text = await tail.read(final);
      if (text !== '') options.onOutput?.(text, stream);
    }
  };
  let last: JobState | undefined;
  let runningSeenAtEpochS: number | undefined;
  let stoppedHere = false;
  let cancelAtMs: number | undefined;
  const stop = async (): Promise<void> => {
    stoppedHere = true;
    if (last === undefined || last.state === 'PENDING') return cancelJob(jobId, { env: options.env });
    cancelAtMs = Date.now() + (options.stopGraceMs ?? 60_000);
    return cancelJob(jobId, { batchSignal: 'TERM', env: options.env });
  };
  let stopping: Promise<void> | undefined;
  const onAbort = (): void => {
    stopping ??= stop().catch(() => cancelJob(jobId, { env: options.env }));
  };
  if (options.signal?.aborted === true) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    let unanswered = 0;
    for (;;) {
      let now: JobState | undefined;
      try {
        now = await queryJobState(jobId, options.env);
        unanswered = 0;
      } catch (error) {
        // A controller that is busy or restarting does not answer for a while; the job goes on meanwhile.
        if (++unanswered * pollMs >= CONTROLLER_SILENCE_MS) throw error;
        await sleep(pollMs);
        continue;
      }
      await relay(false);
      if (now === undefined) break; // Forgotten by the controller (MinJobAge): its end was missed.
      if (last === undefined || now.state !== last.state) {
        if (now.state === 'RUNNING') runningSeenAtEpochS ??= Date.now() / 1000;
        options.onState?.(now, jobId);
      }
      last = now;
      if (hasEnded(now.state)) break;
      if (cancelAtMs !== undefined && Date.now() >= cancelAtMs) {
        cancelAtMs = undefined;
        await cancelJob(jobId, { env: options.env });
      }
      await sleep(pollMs);
    }
    await relay(true);
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    await stopping;
    // Left early (the controller stopped answering, a file could not be read): a job nobody follows is cancelled
    // rather than left to run to its limit; the watchdog goes on covering it if even scancel fails now.
    if (last === undefined || !hasEnded(last.state)) await cancelJob(jobId, { env: options.env }).then(() => unwatchJob(jobId), () => undefined);
    else unwatchJob(jobId);
  }
  const endedSeenAtEpochS = Date.now() / 1000;
  const jobFilesDirectory = await gatherJobFiles(request);
  const ended = last !== undefined && hasEnded(last.state) ? last : undefined;
  return {
    jobId,
    runId: request.runId,
    runDirectory: request.runDirectory,
    ...(ended === undefined ? {} : { job: ended }),
    exitStatus: ended === undefined ? 1 : exitStatusOf(ended),
    stoppedHere,
    jobFilesDirectory,
    submittedAtEpochS,
    ...(runningSeenAtEpochS === undefined ? {} : { runningSeenAtEpochS }),
    endedSeenAtEpochS,
  };
}

/** The run would refuse a used directory only once the job runs: refuse it here, before anything is queued. */
async function refuseUsedRunDirectory(path: string): Promise<void> {
  const entries = await readdir(path).catch(() => [] as string[]);
  if (entries.length > 0) {
    throw new ServelabError('INVALID_CONFIG', `the output directory ${path} is not empty; give --output-dir a new or empty directory (the submitted run writes there)`);
  }
}

/**
 * The job's script, settings and output join the run's logs/ (slurm-job/), so the run directory says how it was made.
 * A job that ended before its run made a directory (cancelled while pending, a node that failed) keeps them where
 * they are, and the caller names that place.
 */
async function gatherJobFiles(request: JobRequest): Promise<string> {
  const logs = join(request.runDirectory, 'logs');
  if (!existsSync(logs)) return request.jobDirectory;
  const target = join(logs, 'slurm-job');
  try {
    await rename(request.jobDirectory, target);
    return target;
  } catch {
    return request.jobDirectory;
  }
}
