import { z } from 'zod';
import { ServelabError } from '../errors/servelab-error.js';
import { slurmTimeSeconds } from './slurm-time.js';

/** The time limit a submitted job gets unless told otherwise: never unlimited (docs/slurm.md, "From a login node"). */
export const DEFAULT_SLURM_TIME = '1:00:00';


/**
 * How a run is submitted to Slurm from a login node: with `launcher: slurm` (schema.ts) outside an allocation the run
 * is one batch job (src/cluster/slurm-jobs/); inside one, job steps are placed in it. Optional without defaults in the schema (the defaults above apply where they are used), so a local run's
 * config.json is unchanged.
 */
export const slurmJobSettingsSchema = z.object({
  // launcher and gpusPerNode, beside these, are run settings (schema.ts); clientNodes a client setting.
  /** sbatch --partition. */
  slurmPartition: z.string().min(1).optional(),
  /** sbatch --account. */
  slurmAccount: z.string().min(1).optional(),
  /** sbatch --time, in any of Slurm's formats (default DEFAULT_SLURM_TIME); never unlimited. */
  slurmTime: z
    .string()
    .refine((value) => slurmTimeSeconds(value) !== undefined, {
      message: 'must be a Slurm time limit above 0 such as 30, 1:00:00 or 1-12:00:00 (minutes, h:m:s, days-h:m:s); a submitted run is never unlimited',
    })
    .optional(),
  /** sbatch arguments passed verbatim, one `#SBATCH` line each (sites differ on --gres, --gpus-per-node, --exclusive). */
  slurmArgs: z.array(z.string().min(1)).optional(),
  /** sbatch --nodes, when the count the run needs (job-request.ts, nodesForRun) is not what the site wants. */
  slurmNodes: z.number().int().positive().optional(),
});

/** Settings that shape only the submission; the run inside the allocation does not get them again. */
export const SUBMISSION_ONLY_SETTINGS = ['slurmPartition', 'slurmAccount', 'slurmTime', 'slurmArgs', 'slurmNodes'] as const;

/**
 * Refuses Slurm settings that the run would silently ignore: without `launcher: slurm` nothing is submitted or placed,
 * so a partition or a time limit given there would change nothing the user can see.
 */
export function rejectIgnoredSlurmSettings(config: z.output<typeof slurmJobSettingsSchema> & { launcher?: string }): void {
  if (config.launcher === 'slurm') return;
  const given = SUBMISSION_ONLY_SETTINGS.filter((key) => config[key] !== undefined);
  if (given.length > 0) {
    const flags = given.map((key) => `--${key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`).join(', ');
    throw new ServelabError('INVALID_CONFIG', `invalid configuration: ${flags} ${given.length > 1 ? 'apply' : 'applies'} to runs placed by Slurm; add --launcher slurm, or drop ${given.length > 1 ? 'them' : 'it'}`);
  }
}
