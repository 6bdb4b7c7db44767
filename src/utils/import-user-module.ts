import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ServelabError } from '../errors/servelab-error.js';

/**
 * Imports a module that a user named where a registry has no builtin of that name: a path (absolute, or relative to
 * the working directory) or a file: URL. Resolves with its exports; when it cannot be imported, throws
 * MODULE_LOAD_FAILED with the message `explain` makes of what the import said (each registry names its own kind,
 * its builtins and the fix).
 */
export async function importUserModule(name: string, explain: (detail: string) => string): Promise<Record<string, unknown>> {
  try {
    const specifier = name.startsWith('file:') ? name : pathToFileURL(resolve(name)).href;
    return (await import(specifier)) as Record<string, unknown>;
  } catch (error) {
    throw new ServelabError('MODULE_LOAD_FAILED', explain(error instanceof Error ? error.message : String(error)), { cause: error });
  }
}
