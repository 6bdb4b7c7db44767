import { ServelabError } from '../../errors/servelab-error.js';
import { runSlurmCommand } from './slurm-command.js';

/** A job as `scontrol show job -o` describes it; undefined fields were not in its answer. */
export interface JobState {
  /** PENDING, RUNNING, COMPLETING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ... (Slurm's JobState). */
  state: string;
  /** Why it waits or ended (Slurm's Reason: Resources, Priority, NonZeroExitCode, ...). */
  reason?: string;
  /** The batch script's exit status and the signal that ended it, from `ExitCode=STATUS:SIGNAL`. */
  exitCode?: number;
  exitSignal?: number;
  nodeList?: string;
}

/** Slurm's states after which a job never runs again (squeue(1), "JOB STATE CODES"). */
const ENDED_STATES = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT', 'NODE_FAIL', 'PREEMPTED', 'OUT_OF_MEMORY', 'BOOT_FAIL', 'DEADLINE', 'SPECIAL_EXIT', 'REVOKED']);

export function hasEnded(state: string): boolean {
  return ENDED_STATES.has(state);
}

/**
 * Reads the one-line form of `scontrol show job -o ID`: space-separated KEY=VALUE pairs. Values with spaces (a
 * working directory) come after the fields read here, and the first occurrence of each key is taken.
 */
export function parseJobLine(line: string): JobState | undefined {
  const field = (key: string): string | undefined => new RegExp(`(?:^|\\s)${key}=(\\S*)`).exec(line)?.[1];
  const state = field('JobState');
  if (state === undefined || state === '') return undefined;
  const exit = /^(\d+):(\d+)$/.exec(field('ExitCode') ?? '');
  const reason = field('Reason');
  const nodeList = field('NodeList');
  return {
    state,
    ...(reason === undefined || reason === 'None' ? {} : { reason }),
    ...(exit === null ? {} : { exitCode: Number(exit[1]), exitSignal: Number(exit[2]) }),
    ...(nodeList === undefined || nodeList === '' || nodeList === '(null)' ? {} : { nodeList }),
  };
}

/**
 * The job's state now, from the controller. Undefined when the controller no longer knows the job (it forgets ended
 * jobs after MinJobAge, 300 s by default): accounting (sacct) may be off, so nothing else can be asked.
 */
export async function queryJobState(jobId: string, env?: NodeJS.ProcessEnv): Promise<JobState | undefined> {
  const answer = await runSlurmCommand('scontrol', ['show', 'job', '-o', jobId], { env, timeoutMs: 30_000 });
  if (answer.code !== 0) {
    if (/invalid job id/i.test(answer.stderr)) return undefined;
    throw new ServelabError('SLURM_JOB_FAILED', `cannot ask Slurm about job ${jobId}: scontrol exited ${String(answer.code)}: ${answer.stderr.trim()}`);
  }
  return parseJobLine(answer.stdout.trim());
}

/**
 * The exit status servelab gives for an ended job: its batch script's (the coordinator's, which `exec`s), or the
 * shell's 128 + N when signal N ended it; a job that ended badly with status 0 (never started, a node failed) is 1.
 */
export function exitStatusOf(job: JobState): number {
  if (job.exitSignal !== undefined && job.exitSignal > 0) return 128 + job.exitSignal;
  const code = job.exitCode ?? 1;
  return code === 0 && job.state !== 'COMPLETED' ? 1 : code;
}

/** Cancels a job: at once, or (batchSignal) only a signal to its coordinator, which then stops as on Ctrl-C. */
export async function cancelJob(jobId: string, options: { batchSignal?: 'TERM'; env?: NodeJS.ProcessEnv } = {}): Promise<void> {
  const args = options.batchSignal === undefined ? [jobId] : ['--batch', `--signal=${options.batchSignal}`, jobId];
  const answer = await runSlurmCommand('scancel', args, { env: options.env, timeoutMs: 30_000 });
  // An ended job is already what cancelling wanted.
  if (answer.code !== 0 && !/already completing or completed|invalid job id/i.test(answer.stderr)) {
    throw new ServelabError('SLURM_JOB_FAILED', `scancel ${args.join(' ')} failed (exit ${String(answer.code)}): ${answer.stderr.trim()}; cancel job ${jobId} by hand`);
  }
}
