import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JobRequest } from '../cluster/slurm-jobs/job-request.js';
import { hasEnded, type JobState } from '../cluster/slurm-jobs/job-state.js';
import { submitAndFollow, type SubmittedRun } from '../cluster/slurm-jobs/submitted-run.js';
import { terminalSafe } from '../utils/terminal-text.js';
import { abortOnSignals, exitCodeFor } from './interrupts.js';

const say = (text: string): void => {
  process.stderr.write(`servelab: ${terminalSafe(text)}\n`);
};

/**
 * Submits the run, relays its progress and summary (the job's output, as the coordinator writes it), and returns the
 * run's own exit status. The first Ctrl-C or SIGTERM tells the coordinator to stop and write what it measured (a
 * pending job is cancelled); a second exits at once, and the job watchdog cancels the job.
 */
export async function followSubmittedRun(request: JobRequest): Promise<number> {
  let jobId: string | undefined;
  let running = false;
  const interrupts = abortOnSignals((signal) => {
    // As submitAndFollow acts: a job still queued is cancelled; a running one's coordinator is told to stop.
    const what = jobId === undefined ? 'cancelling the submission' : running ? `telling job ${jobId} to stop and write what it measured` : `cancelling job ${jobId}, which has not started`;
    say(`${signal} received: ${what} (press Ctrl-C again to cancel it at once)`);
  });
  try {
    const outcome = await submitAndFollow(request, {
      signal: interrupts.signal,
      onSubmitted: (id) => {
        jobId = id;
        say(`submitted job ${id} (sbatch); the run writes ${request.runDirectory}; following it (Ctrl-C stops it)`);
      },
      // The end has its own line, with the exit status and timings.
      onState: (job, id) => {
        running = job.state !== 'PENDING';
        if (!hasEnded(job.state)) say(`job ${id} ${describeState(job)}`);
      },
      onOutput: (text, stream) => (stream === 'stdout' ? process.stdout : process.stderr).write(text),
    });
    say(await endLine(outcome));
    const signal = interrupts.received();
    return outcome.stoppedHere && signal !== undefined ? exitCodeFor(signal) : outcome.exitStatus;
  } finally {
    interrupts.dispose();
  }
}

function describeState(job: JobState): string {
  if (job.state === 'RUNNING') return `RUNNING${job.nodeList === undefined ? '' : ` on ${job.nodeList}`}`;
  return `${job.state}${job.reason === undefined ? '' : ` (${job.reason})`}`;
}

/** How the job ended, and how long it took to start: the figures a user of a shared cluster asks first. */
async function endLine(outcome: SubmittedRun): Promise<string> {
  const seconds = (value: number): string => `${value.toFixed(1)} s`;
  const timings: string[] = [];
  if (outcome.runningSeenAtEpochS !== undefined) timings.push(`submit to running ${seconds(outcome.runningSeenAtEpochS - outcome.submittedAtEpochS)}`);
  const t0 = await runStartEpochS(outcome.runDirectory);
  if (t0 !== undefined) timings.push(`submit to the run's t0 (its first request's schedule origin) ${seconds(t0 - outcome.submittedAtEpochS)}`);
  const files = `job script and output: ${outcome.jobFilesDirectory}`;
  if (outcome.job === undefined) {
    return `job ${outcome.jobId} left the controller before its end was seen (Slurm forgets ended jobs after MinJobAge); exit status unknown, taken as 1. ${files}`;
  }
  const how = outcome.job.state === 'CANCELLED' && !outcome.stoppedHere ? 'was CANCELLED (not by this servelab: scancel, or an administrator)' : `ended ${outcome.job.state}`;
  const limit = outcome.job.state === 'TIMEOUT' ? ' at its time limit (--slurm-time)' : '';
  return `job ${outcome.jobId} ${how}${limit}, exit status ${outcome.exitStatus}${timings.length > 0 ? `; ${timings.join(', ')}` : ''}. ${files}`;
}

async function runStartEpochS(runDirectory: string): Promise<number | undefined> {
  const text = await readFile(join(runDirectory, 'summary.json'), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const t0 = (JSON.parse(text) as { run?: { t0EpochSeconds?: unknown } }).run?.t0EpochSeconds;
    return typeof t0 === 'number' ? t0 : undefined;
  } catch {
    return undefined;
  }
}
