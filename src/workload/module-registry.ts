import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ServelabError } from '../errors/servelab-error.js';

/**
 * Finds an implementation by name in a registry, or else loads the name as a module path (relative to the working
 * directory) and takes its default export or the named export `exportName`.
 */
export async function loadFromRegistryOrModule<T>(
  kind: string,
  name: string,
  registry: Readonly<Record<string, T>>,
  exportName: string,
  isImplementation: (value: unknown) => value is T,
): Promise<T> {
  const registered = Object.hasOwn(registry, name) ? registry[name] : undefined;
  if (registered !== undefined) return registered;
  let moduleExports: Record<string, unknown>;
  try {
    moduleExports = (await import(pathToFileURL(resolve(name)).href)) as Record<string, unknown>;
  } catch (error) {
    throw new ServelabError(
      'MODULE_LOAD_FAILED',
      `unknown ${kind} "${name}": it is none of ${Object.keys(registry).join(', ')} and could not be loaded as a module ` +
        `(${error instanceof Error ? error.message : String(error)}); use a built-in name or the path of a JavaScript module`,
      { cause: error },
    );
  }
  for (const candidate of [moduleExports[exportName], moduleExports['default']]) {
    if (isImplementation(candidate)) return candidate;
  }
  throw new ServelabError(
    'MODULE_LOAD_FAILED',
    `the module "${name}" loaded but exports no ${kind}: export one as "${exportName}" or as the default export`,
  );
}
