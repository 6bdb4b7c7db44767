import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ServelabError } from '../../errors/servelab-error.js';
import { didYouMean } from '../../utils/did-you-mean.js';
import type { RoutingPolicy, RoutingPolicyFactory, RoutingPolicyOptions } from '../../types/routing.js';
import { createCacheAwarePolicy } from './cache-aware/cache-aware-policy.js';
import { createConsistentHashingPolicy } from './consistent-hashing/consistent-hashing-policy.js';
import { createLeastLoadPolicy } from './least-load/least-load-policy.js';
import { createPrefixHashPolicy } from './prefix-hash/prefix-hash-policy.js';
import { createPowerOfTwoPolicy } from './power-of-two/power-of-two-policy.js';
import { createRandomPolicy } from './random/random-policy.js';
import { createRoundRobinPolicy } from './round-robin/round-robin-policy.js';
import { createShortestQueuePolicy } from './shortest-queue/shortest-queue-policy.js';

/** The builtin policies, by the names the configuration uses (`routingPolicy`). */
export const builtinRoutingPolicies: Readonly<Record<string, RoutingPolicyFactory>> = {
  cache_aware: createCacheAwarePolicy,
  round_robin: createRoundRobinPolicy,
  random: createRandomPolicy,
  power_of_two: createPowerOfTwoPolicy,
  shortest_queue: createShortestQueuePolicy,
  // smg's policies beyond sglang-router's, so routing studies can compare them without smg installed.
  least_load: createLeastLoadPolicy,
  prefix_hash: createPrefixHashPolicy,
  consistent_hashing: createConsistentHashingPolicy,
};

export function isBuiltinRoutingPolicy(name: string): boolean {
  return Object.hasOwn(builtinRoutingPolicies, name);
}

/** A policy module is named by a path: it holds a slash or a dot (`./my-policy.js`); a builtin name holds neither. */
function looksLikeModulePath(name: string): boolean {
  return /[/\\.]/.test(name);
}

function unknownPolicy(name: string): ServelabError {
  const names = Object.keys(builtinRoutingPolicies);
  return new ServelabError(
    'INVALID_CONFIG',
    `unknown routing policy "${name}": use one of ${names.join(', ')}, or a module path such as ./my-policy.js.${didYouMean(name, names)}`,
  );
}

/**
 * Checks a `routingPolicy` before anything starts: a builtin name, or a module path. A typo (`cache-aware`) fails here
 * with a suggestion, not after the servers were launched; a module is loaded (and its file checked) when the router
 * starts.
 */
export function checkRoutingPolicyName(name: string): void {
  if (!isBuiltinRoutingPolicy(name) && !looksLikeModulePath(name)) throw unknownPolicy(name);
}

/** A builtin policy, synchronously (for virtual-time simulations, which never load modules mid-run). */
export function createBuiltinRoutingPolicy(name: string, options: RoutingPolicyOptions = {}): RoutingPolicy {
  const factory = isBuiltinRoutingPolicy(name) ? builtinRoutingPolicies[name] : undefined;
  if (factory === undefined) throw unknownPolicy(name);
  return factory(options);
}

/**
 * A builtin policy by name, or else a module loaded from `nameOrPath` (relative paths resolve against `baseDirectory`,
 * the current directory by default). The module exports a factory `(options) => RoutingPolicy` as its default export
 * or as `createPolicy`; a module that exports a policy object directly is accepted too.
 */
export async function loadRoutingPolicy(
  nameOrPath: string,
  options: RoutingPolicyOptions = {},
  baseDirectory: string = process.cwd(),
): Promise<RoutingPolicy> {
  if (isBuiltinRoutingPolicy(nameOrPath)) return createBuiltinRoutingPolicy(nameOrPath, options);
  if (!looksLikeModulePath(nameOrPath)) {
    throw new ServelabError(
      'MODULE_LOAD_FAILED',
      `routing policy "${nameOrPath}" is neither builtin (${Object.keys(builtinRoutingPolicies).join(', ')}) nor a module path; give a path such as ./my-policy.js.${didYouMean(nameOrPath, Object.keys(builtinRoutingPolicies))}`,
    );
  }
  const absolutePath = isAbsolute(nameOrPath) ? nameOrPath : resolve(baseDirectory, nameOrPath);
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(absolutePath).href)) as Record<string, unknown>;
  } catch (error) {
    throw new ServelabError(
      'MODULE_LOAD_FAILED',
      `could not load routing policy module ${absolutePath}: ${(error as Error).message}. Check the path; a .ts module needs a runtime that loads TypeScript, otherwise compile it to .js`,
      { cause: error },
    );
  }
  const exported = loaded['createPolicy'] ?? loaded['default'];
  let policy: unknown = exported;
  if (typeof exported === 'function') {
    try {
      policy = await (exported as (options: RoutingPolicyOptions) => unknown)(options);
    } catch (error) {
      throw new ServelabError(
        'MODULE_LOAD_FAILED',
        `routing policy module ${absolutePath}: its factory threw: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }
  const problem = describeInterfaceProblem(policy);
  if (problem !== undefined) {
    throw new ServelabError(
      'MODULE_LOAD_FAILED',
      `routing policy module ${absolutePath} does not implement RoutingPolicy: ${problem}. Export a factory \`createPolicy(options)\` (or a default export) returning { name, needsRoutingKey, choose(request, workers) }`,
    );
  }
  return policy as RoutingPolicy;
}

function describeInterfaceProblem(candidate: unknown): string | undefined {
  if (typeof candidate !== 'object' || candidate === null) {
    return 'it exports neither `createPolicy` nor a default export that gives a policy object';
  }
  const fields = candidate as Record<string, unknown>;
  if (typeof fields['choose'] !== 'function') return '`choose` is not a function';
  if (typeof fields['name'] !== 'string') return '`name` is not a string';
  if (typeof fields['needsRoutingKey'] !== 'boolean') return '`needsRoutingKey` is not a boolean';
  for (const hook of ['onRequestFinished', 'onWorkerAdded', 'onWorkerRemoved']) {
    if (fields[hook] !== undefined && typeof fields[hook] !== 'function') return `\`${hook}\` is not a function`;
  }
  return undefined;
}
