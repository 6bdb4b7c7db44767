import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * Whether benchmark processes can be pinned to their own cores with taskset (so a stub server and the client under
 * test do not share one). `BENCH_PIN=0` turns pinning off: on a machine busy with other work, pinning can be worse.
 */
export function canPin(): boolean {
  if (process.env['BENCH_PIN'] === '0' || availableParallelism() < 2) return false;
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
