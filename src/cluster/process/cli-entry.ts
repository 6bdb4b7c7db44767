import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The path of servelab's own CLI, to launch sim-servers, routers and taps as child processes.
 * From the built package it sits beside this file's tree; when servelab runs from TypeScript sources (under the test
 * runner) it is the built copy in `dist/`, which `npm test` builds first.
 */
export function servelabCliPath(): string {
  const sibling = fileURLToPath(new URL('../../cli/main.js', import.meta.url));
  if (existsSync(sibling)) return sibling;
  const built = fileURLToPath(new URL('../../../dist/src/cli/main.js', import.meta.url));
  if (existsSync(built)) return built;
  return sibling;
}
