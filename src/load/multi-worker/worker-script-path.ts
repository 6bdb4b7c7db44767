import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ServelabError } from '../../errors/servelab-error.js';

/**
 * The load worker's entry script. From the built package it is this file's sibling; when servelab runs from its
 * TypeScript sources (under the test runner) a worker thread cannot load `.ts`, so it is the built copy in `dist/`,
 * which `npm test` builds first.
 */
export function loadWorkerScriptPath(): string {
  const sibling = fileURLToPath(new URL('./worker-entry.js', import.meta.url));
  if (existsSync(sibling)) return sibling;
  const built = fileURLToPath(new URL('../../../dist/src/load/multi-worker/worker-entry.js', import.meta.url));
  if (existsSync(built)) return built;
  throw new ServelabError(
    'FILE_NOT_FOUND',
    `the load worker script is missing (looked for ${sibling} and ${built}); build servelab (npm run build) or use one client worker`,
  );
}
