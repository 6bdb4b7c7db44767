import { ServelabError } from '../../errors/servelab-error.js';
import { workerScript } from '../../utils/worker-script.js';

/**
 * The load worker's entry script. From the built package it is this file's sibling; when servelab runs from its
 * TypeScript sources (under the test runner) a worker thread cannot load `.ts`, so it is the built copy in `dist/`,
 * which `npm test` builds first.
 */
export function loadWorkerScriptPath(): string {
  const script = workerScript(import.meta.url, 'worker-entry.js');
  if (script.path !== null) return script.path;
  throw new ServelabError(
    'FILE_NOT_FOUND',
    `the load worker script is missing (looked for ${script.lookedAt.join(' and ')}); build servelab (npm run build) or use one client worker`,
  );
}
