import { spawn } from 'node:child_process';
import { ServelabError } from '../../errors/servelab-error.js';

export interface SlurmCommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs one of Slurm's client commands (sbatch, squeue, scontrol, scancel) to its end, with `input` on stdin. Slurm
 * finds its controller from the environment (SLURM_CONF) or the site's default configuration, as the user's own
 * commands do. A missing command is NOT_INSTALLED, naming what to install; anything else is the caller's to judge.
 */
export function runSlurmCommand(command: string, args: readonly string[], options: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<SlurmCommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    // A controller that does not answer must not hang servelab: Slurm's own timeouts are long (MessageTimeout).
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (error.code === 'ENOENT') {
        reject(new ServelabError('NOT_INSTALLED', `${command} is not installed or not on PATH; --launcher slurm from a login node needs Slurm's client commands (Debian: apt-get install slurm-client)`));
      } else reject(new ServelabError('SLURM_JOB_FAILED', `cannot run ${command}: ${error.message}`, { cause: error }));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}
