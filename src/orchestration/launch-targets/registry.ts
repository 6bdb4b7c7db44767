import { ServelabError } from '../../errors/servelab-error.js';
import { didYouMean } from '../../utils/did-you-mean.js';
import { importUserModule } from '../../utils/import-user-module.js';
import { attachTarget } from './attach-target.js';
import { sglangTarget } from './sglang-target.js';
import { simTarget } from './sim-target.js';
import type { TargetLauncher } from './target-launcher.js';

/** The builtin targets, by the names `--target` takes. */
export const builtinTargets: Readonly<Record<string, TargetLauncher>> = {
  sim: simTarget,
  sglang: sglangTarget,
  attach: attachTarget,
};

export function builtinTarget(name: string): TargetLauncher | undefined {
  return Object.hasOwn(builtinTargets, name) ? builtinTargets[name] : undefined;
}

/**
 * The launcher for a target name: a builtin one, or else a module loaded from the name as a path (absolute, or
 * relative to the working directory) whose default export, or export `targetLauncher`, is a TargetLauncher.
 */
export async function loadTargetLauncher(name: string): Promise<TargetLauncher> {
  const builtin = builtinTarget(name);
  if (builtin !== undefined) return builtin;
  const names = Object.keys(builtinTargets);
  const loaded = await importUserModule(
    name,
    (detail) =>
      `target "${name}" is neither built in (${names.join(', ')}) nor a module that loads (${detail}); ` +
      `use one of the built-in targets, or give the path of a module that exports a target launcher.${didYouMean(name, names)}`,
  );
  const launcher = (loaded['default'] ?? loaded['targetLauncher']) as Partial<TargetLauncher> | undefined;
  const missing = (['launchNode', 'launchClusterNode', 'describeNodeStart', 'describeClusterStart'] as const).filter((method) => typeof launcher?.[method] !== 'function');
  if (launcher === undefined || typeof launcher !== 'object' || missing.length > 0) {
    throw new ServelabError(
      'MODULE_LOAD_FAILED',
      `module "${name}" loaded but exports no target launcher${launcher !== undefined && typeof launcher === 'object' ? ` (it lacks ${missing.join(', ')})` : ''}; export default an object with name, launchNode, launchClusterNode, describeNodeStart and describeClusterStart (docs/placement.md)`,
    );
  }
  return { unmodelledColumns: [], serversReportOnThemselves: false, name, ...launcher } as TargetLauncher;
}
