import { terminalSafe } from '../utils/terminal-text.js';
import { isServelabError } from '../errors/servelab-error.js';
import { EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE } from './exit-codes.js';

/** Prints a one-line reason (plus details, such as a server's log tail) and returns the exit code. */
export function reportError(error: unknown, debug: boolean): number {
  if (isServelabError(error)) {
    // Messages and details may quote what a server or a child process wrote: never let it drive the terminal.
    process.stderr.write(`servelab: ${terminalSafe(error.message)}\n`);
    if (error.details !== undefined) process.stderr.write(`${terminalSafe(error.details)}\n`);
    if (debug && error.stack !== undefined) process.stderr.write(`${error.stack}\n`);
    if (error.code === 'INVALID_CONFIG' || error.code === 'INVALID_PROFILE') return EXIT_USAGE;
    if (error.code === 'INTERRUPTED') return EXIT_INTERRUPTED;
    return EXIT_FAILED;
  }
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`servelab: unexpected error: ${terminalSafe(message)}\n`);
  if (debug && error instanceof Error && error.stack !== undefined) process.stderr.write(`${error.stack}\n`);
  else process.stderr.write('(run again with --debug for a stack trace, and please report it)\n');
  return EXIT_FAILED;
}
