/**
 * Whether this process runs inside a Slurm allocation (under salloc, in an sbatch script, in an srun step): Slurm
 * sets SLURM_JOB_ID there. Inside, `--launcher slurm` places job steps in the allocation; outside, it submits a job.
 */
export function isInsideSlurmAllocation(env: NodeJS.ProcessEnv = process.env): boolean {
  const jobId = env['SLURM_JOB_ID'];
  return jobId !== undefined && jobId.trim() !== '';
}
