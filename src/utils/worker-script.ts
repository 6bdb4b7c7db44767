import { existsSync } from 'node:fs';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where a worker thread's entry script is: `name`, beside the module at `moduleUrl` in the built package. When servelab
 * runs from its TypeScript sources (under the test runner) a worker thread cannot load `.ts`, so it is the built copy
 * under `dist/` instead. `path` is null when neither exists; `lookedAt` lists both places, for the error a caller gives.
 */
export function workerScript(moduleUrl: string, name: string): { path: string | null; lookedAt: string[] } {
  const sibling = fileURLToPath(new URL(`./${name}`, moduleUrl));
  const lookedAt = [sibling];
  if (existsSync(sibling)) return { path: sibling, lookedAt };
  // <root>/src/<dir>/<name> from the sources is <root>/dist/src/<dir>/<name> once built.
  const sourceDirectory = `${sep}src${sep}`;
  const at = sibling.lastIndexOf(sourceDirectory);
  if (at < 0 || sibling.slice(0, at).endsWith(`${sep}dist`)) return { path: null, lookedAt };
  const built = `${sibling.slice(0, at)}${sep}dist${sibling.slice(at)}`;
  lookedAt.push(built);
  return { path: existsSync(built) ? built : null, lookedAt };
}
