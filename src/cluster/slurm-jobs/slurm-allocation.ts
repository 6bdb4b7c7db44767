/**
 * Whether this process runs inside a Slurm allocation (under salloc, in an sbatch script, in an srun step): Slurm
 * sets SLURM_JOB_ID there. Inside, `--launcher slurm` places job steps in the allocation; outside, it submits a job.
 */
export function isInsideSlurmAllocation(env: NodeJS.ProcessEnv = process.env): boolean {
  const jobId = env['SLURM_JOB_ID'];
  return jobId !== undefined && jobId.trim() !== '';
}

/** Whether a run with these settings is submitted as a batch job: Slurm asked for, and no allocation around us. */
export function submitsAsJob(settings: { launcher?: unknown }, env: NodeJS.ProcessEnv = process.env): boolean {
  return settings.launcher === 'slurm' && !isInsideSlurmAllocation(env);
}
