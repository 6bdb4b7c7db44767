import type { Command } from 'commander';
import { ServelabError } from '../errors/servelab-error.js';
import type { TestLevel } from '../types/run.js';
import { submitsAsJob } from '../cluster/slurm-jobs/slurm-allocation.js';
import { EXIT_OK } from './exit-codes.js';

/** `--dry-run`: a command-line option only, never a setting (a run file that dry-runs would never run). */
export function addDryRunOption(command: Command): void {
  command.option('--dry-run', 'with --launcher slurm outside an allocation: print the batch script that would be submitted, and exit without submitting');
}

/**
 * The submit path of `servelab node | route | run`: with `launcher: slurm` outside an allocation, the run is submitted
 * as one batch job and followed here (or, with --dry-run, its script is printed). Returns the exit code, or undefined
 * when the command should run the test here as usual.
 */
export async function submitOrDryRun(test: TestLevel, settings: Record<string, unknown>, dryRun: boolean): Promise<number | undefined> {
  if (!submitsAsJob(settings)) {
    if (dryRun) {
      const why = settings['launcher'] === 'slurm' ? 'inside an allocation (SLURM_JOB_ID is set) the run places job steps in it and submits nothing' : 'add --launcher slurm';
      throw new ServelabError('INVALID_CONFIG', `invalid configuration: --dry-run prints the batch script a --launcher slurm run submits from a login node; ${why}`);
    }
    return undefined;
  }
  const { jobContext } = await import('../cluster/slurm-jobs/job-context.js');
  const { jobRequestFor } = await import('../cluster/slurm-jobs/job-request.js');
  const request = jobRequestFor(test, settings, jobContext());
  if (dryRun) {
    const { buildJobScript } = await import('../cluster/slurm-jobs/job-script.js');
    process.stdout.write(buildJobScript(request.spec));
    return EXIT_OK;
  }
  const { followSubmittedRun } = await import('./follow-submitted-run.js');
  return followSubmittedRun(request);
}
