import { didYouMean } from '../../utils/did-you-mean.js';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ServelabError } from '../../errors/servelab-error.js';
import type { SchedulingPolicy } from '../../types/engine.js';
import { BUILTIN_SCHEDULING_POLICIES } from './builtin-policies.js';

/**
 * Resolves `--schedule-policy`: a built-in name (fcfs, lpm), a policy object, or a path to an ES module whose default
 * export (or export named `policy`) is a SchedulingPolicy or a function that returns one.
 */
export async function resolveSchedulingPolicy(setting: string | SchedulingPolicy): Promise<SchedulingPolicy> {
  if (typeof setting !== 'string') return checkPolicy(setting, 'the given policy object');
  const builtin = BUILTIN_SCHEDULING_POLICIES[setting];
  if (builtin !== undefined) return builtin;
  const path = resolve(setting);
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (error) {
    throw new ServelabError(
      'MODULE_LOAD_FAILED',
      `schedule policy "${setting}" is neither built in (${Object.keys(BUILTIN_SCHEDULING_POLICIES).join(', ')}) nor ` +
        `a loadable module (${path}: ${(error as Error).message}); give a built-in name or the path of a .js/.mjs ` +
        `module exporting a SchedulingPolicy.${didYouMean(setting, Object.keys(BUILTIN_SCHEDULING_POLICIES))}`,
      { cause: error },
    );
  }
  let exported = loaded['default'] ?? loaded['policy'];
  if (typeof exported === 'function') exported = (exported as () => unknown)();
  return checkPolicy(exported, path);
}

function checkPolicy(value: unknown, where: string): SchedulingPolicy {
  const candidate = value as Partial<SchedulingPolicy> | null | undefined;
  if (
    candidate === null ||
    candidate === undefined ||
    typeof candidate.name !== 'string' ||
    typeof candidate.order !== 'function'
  ) {
    throw new ServelabError(
      'MODULE_LOAD_FAILED',
      `${where} does not export a scheduling policy: export default { name: string, order(waiting, context) { ... } } ` +
        '(see examples/custom-scheduling-policy/)',
    );
  }
  return candidate as SchedulingPolicy;
}
