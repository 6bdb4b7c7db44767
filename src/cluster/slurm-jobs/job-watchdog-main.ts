/**
 * The job watchdog process (see job-watchdog.ts). Reads `+JOBID` / `-JOBID` lines on stdin; at end-of-file (servelab
 * exited or was killed, even by SIGKILL) it cancels every job still registered with `scancel`, and exits. It finds
 * the controller as servelab did: it inherits servelab's environment (SLURM_CONF included).
 */
import { spawn } from 'node:child_process';
import { readRegistrationLines } from '../../utils/registration-lines.js';

const jobs = new Set<string>();

/** Job ids are digits (an array task's `12_3`, a federation's `12;cluster` are never registered). */
const isJobId = (id: string): boolean => /^\d+$/.test(id);

readRegistrationLines(process.stdin, {
  register(jobId) {
    if (isJobId(jobId)) jobs.add(jobId);
  },
  unregister(jobId) {
    if (isJobId(jobId)) jobs.delete(jobId);
  },
});
process.stdin.on('end', () => {
  if (jobs.size === 0) process.exit(0);
  const scancel = spawn('scancel', [...jobs], { stdio: 'ignore' });
  scancel.on('error', () => process.exit(1));
  scancel.on('close', (code) => process.exit(code ?? 1));
});
// The terminal's Ctrl-C reaches the whole foreground group: servelab decides what a first Ctrl-C does to its jobs.
process.on('SIGINT', () => undefined);
