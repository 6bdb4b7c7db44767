import { servelabCliPath } from '../process/cli-entry.js';
import type { JobRequestContext } from './job-request.js';

/** The submitting side as the job sees it: this directory, this Node.js and this servelab, at the same paths there. */
export function jobContext(): JobRequestContext {
  return { workingDirectory: process.cwd(), nodeExecutable: process.execPath, cliPath: servelabCliPath() };
}
