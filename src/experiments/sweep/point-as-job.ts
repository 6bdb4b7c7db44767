import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { correctRunClocks } from '../../analysis/clock-offset/correct-run-clocks.js';
import { summarize } from '../../analysis/summarize.js';
import { jobContext } from '../../cluster/slurm-jobs/job-context.js';
import { jobRequestFor } from '../../cluster/slurm-jobs/job-request.js';
import { submitAndFollow } from '../../cluster/slurm-jobs/submitted-run.js';
import { ServelabError } from '../../errors/servelab-error.js';
import { runSlo } from '../../report/regenerate.js';
import { readRunDirectory } from '../../report/run-directory.js';
import type { TestLevel } from '../../types/run.js';
import { toTestResult, type TestResult } from '../test-result.js';

/**
 * One sweep point run as its own batch job (`launcher: slurm` outside an allocation): submitted, followed to its end,
 * and read back from its run directory, which the job wrote under the sweep directory (a filesystem this host shares:
 * docs/slurm.md). A job that did not end COMPLETED with status 0 (failed, cancelled, out of time) is a failed point:
 * the error names the job, how it ended and the last lines it wrote, and its files stay where they are.
 */
export async function runPointAsJob(test: TestLevel, settings: Record<string, unknown>, signal?: AbortSignal): Promise<TestResult> {
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

/** The job's last words (its stderr's last two lines), for the sweep's failure column. */
async function lastLinesOf(path: string): Promise<string> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text.trim().split('\n').slice(-2).join(' / ');
}
