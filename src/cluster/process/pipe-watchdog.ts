import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { childEnv } from './child-env.js';

/**
 * Starts a small detached process (`script`, a file beside `moduleUrl`) that holds the read end of a pipe from us: when
 * we die, even by SIGKILL, the kernel closes our end and the process reads end-of-file and cleans up what we told it
 * of through the pipe. The process-group watchdog (watchdog.ts) and the Slurm job watchdog
 * (src/cluster/slurm-jobs/job-watchdog.ts) are two. Undefined when running from sources under a test runner (the
 * caller's exit handler then suffices).
 */
export function startPipeWatchdog(script: string, moduleUrl: string, onGone: () => void): ChildProcess | undefined {
  const scriptPath = fileURLToPath(new URL(`./${script}${moduleUrl.endsWith('.ts') ? '.ts' : '.js'}`, moduleUrl));
  if (scriptPath.endsWith('.ts')) return undefined;
  // Never the API key (childEnv): the watchdog outlives nothing it needs a secret for, and a child's environment can
  // be read by any process of the same user.
  const watchdog = spawn(process.execPath, [scriptPath], { stdio: ['pipe', 'ignore', 'ignore'], detached: true, env: childEnv() });
  watchdog.unref();
  // The pipe must not keep our event loop alive.
  (watchdog.stdin as Socket | null)?.unref();
  // A watchdog killed from outside (scancel signals every process of a job, the watchdog included) closes the pipe,
  // and the next write fails with EPIPE: that must not end the run. The exit handler still stops what remains.
  watchdog.stdin?.on('error', () => undefined);
  watchdog.on('error', onGone);
  return watchdog;
}
