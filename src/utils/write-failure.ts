import { ServelabError } from '../errors/servelab-error.js';

/** Whether a write failed because the disk (or the user's quota on it) is full. */
export function isDiskFull(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/**
 * One line naming the file and what went wrong: a full disk says so plainly (Node's own message is
 * `ENOSPC: no space left on device, write`, which names neither the file nor what to do).
 */
export function writeFailure(path: string, error: unknown): ServelabError {
  if (isDiskFull(error)) {
    return new ServelabError('DISK_FULL', `the disk is full: could not write ${path}; free space there (or choose another --output-dir) and run \`servelab report\` on the run directory to rebuild its files`, { cause: error });
  }
  if (error instanceof ServelabError) return error;
  const reason = (error as NodeJS.ErrnoException | undefined)?.code ?? (error instanceof Error ? error.message : String(error));
  return new ServelabError('WRITE_FAILED', `could not write ${path} (${reason})`, { cause: error });
}
