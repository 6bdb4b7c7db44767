import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { correctRunClocks } from '../analysis/clock-offset/correct-run-clocks.js';
import { summarize } from '../analysis/summarize.js';
import { jobContext } from '../cluster/slurm-jobs/job-context.js';
import { jobRequestFor } from '../cluster/slurm-jobs/job-request.js';
import { buildJobScript } from '../cluster/slurm-jobs/job-script.js';
import { submitAndFollow } from '../cluster/slurm-jobs/submitted-run.js';
import { ServelabError } from '../errors/servelab-error.js';
import { runSlo } from '../report/regenerate.js';
import { readRunDirectory } from '../report/run-directory.js';
import type { TestLevel } from '../types/run.js';
import { toTestResult, type TestResult } from './test-result.js';

/**
 * A test run as its own batch job (`launcher: slurm` outside an allocation), for the library and sweep points:
 * submitted, followed to its end, and read back from its run directory, which the job wrote (on a filesystem this host
 * shares: docs/slurm.md). A job that did not end COMPLETED with status 0 (failed, cancelled, out of time) throws
 * SLURM_JOB_FAILED naming the job, how it ended and the last lines it wrote; its files stay where they are. (The
 * command line follows the job itself, relaying its output: src/cli/follow-submitted-run.ts.)
 */
export async function runTestAsJob(test: TestLevel, settings: Record<string, unknown>, signal?: AbortSignal): Promise<TestResult> {
  const request = jobRequestFor(test, settings, jobContext());
  const outcome = await submitAndFollow(request, { signal });
  if (outcome.stoppedHere) throw new ServelabError('INTERRUPTED', `the sweep was interrupted; job ${outcome.jobId} was stopped (${request.runDirectory})`);
  if (outcome.job?.state !== 'COMPLETED' || outcome.exitStatus !== 0) {
    const ended = outcome.job === undefined ? 'left the controller before its end was seen' : `ended ${outcome.job.state}${outcome.job.reason === undefined ? '' : ` (${outcome.job.reason})`}`;
    const lastLines = await lastLinesOf(join(outcome.jobFilesDirectory, 'slurm-job.err'));
    throw new ServelabError('SLURM_JOB_FAILED', `job ${outcome.jobId} ${ended}, exit status ${outcome.exitStatus}${lastLines === '' ? '' : `: ${lastLines}`} (files: ${request.runDirectory})`);
  }
  const loaded = await readRunDirectory(request.runDirectory);
  const run = correctRunClocks(loaded.run);
  const slo = runSlo(loaded);
  const summary = summarize(run, slo === undefined ? {} : { slo });
  const files = (await readdir(request.runDirectory, { recursive: true })).map((file) => join(request.runDirectory, file));
  return toTestResult(run, summary, request.runDirectory, files);
}

/** The job's last words (its stderr's last two lines), for the error (a sweep's failure column). */
async function lastLinesOf(path: string): Promise<string> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text.trim().split('\n').slice(-2).join(' / ');
}

/**
 * The batch script `run()` would submit for these settings (`launcher: slurm` outside an allocation): the library's
 * `--dry-run`. Validates the settings as the run would.
 */
export function slurmBatchScript(test: TestLevel, settings: Record<string, unknown>): string {
  return buildJobScript(jobRequestFor(test, settings, jobContext()).spec);
}
