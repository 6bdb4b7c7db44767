import { execFile } from 'node:child_process';
import { ServelabError } from '../../../errors/servelab-error.js';

/** How long one Slurm client command (scontrol, scancel, a one-line step) may take before servelab gives up on it. */
const COMMAND_TIMEOUT_MS = 30_000;

/**
 * Runs a Slurm client command and resolves with its stdout. `env` is the environment Slurm's clients read
 * (SLURM_CONF, SLURM_JOB_ID, ...). A program that is not installed is NOT_INSTALLED; one that fails is UNREACHABLE,
 * with what it printed.
 */
export function slurmCommand(program: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(program, args, { env, timeout: COMMAND_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error === null) {
        resolve(stdout);
        return;
      }
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(new ServelabError('NOT_INSTALLED', `${program} is not installed here: the Slurm launcher needs Slurm's client commands (srun, scontrol, scancel) on the host that runs servelab`));
        return;
      }
      const printed = `${stderr}`.trim() || `${stdout}`.trim() || error.message;
      reject(new ServelabError('UNREACHABLE', `${program} ${args.join(' ')} failed: ${printed.split('\n').slice(-3).join(' / ')}; check that this allocation still runs (squeue --jobs $SLURM_JOB_ID)`));
    });
  });
}

/** The variables Slurm's clients read (SLURM_CONF, SLURM_JOB_ID, ...): what a step's srun needs from `env`. */
export function slurmVariables(env: NodeJS.ProcessEnv): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (name.startsWith('SLURM_') && value !== undefined) picked[name] = value;
  return picked;
}
