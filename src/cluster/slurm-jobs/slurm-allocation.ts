import { insideSlurmAllocation } from '../placement/slurm/slurm-allocation.js';

/**
 * Whether a run with these settings is submitted as a batch job: Slurm asked for, and no allocation around us
 * (`insideSlurmAllocation`: inside one, `--launcher slurm` places job steps in it instead).
 */
export function submitsAsJob(settings: { launcher?: unknown }, env: NodeJS.ProcessEnv = process.env): boolean {
  return settings.launcher === 'slurm' && !insideSlurmAllocation(env);
}
