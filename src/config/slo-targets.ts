import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { ServelabError } from '../errors/servelab-error.js';
import type { SloTargets } from '../types/summary.js';
import { didYouMean } from '../utils/did-you-mean.js';

/** The objectives goodput can hold a request to, in milliseconds: camelCase (canonical) and the first users' snake_case. */
export const SLO_NAMES: Readonly<Record<keyof SloTargets, string>> = { ttftMs: 'ttft_ms', tpotMs: 'tpot_ms', totalMs: 'total_ms' };

/**
 * The objectives as a strict schema: an unknown key is an error, never dropped (zod's default strips it, and an SLO
 * whose every key was dropped used to read as "no SLO", so goodput came out 100%).
 */
export const sloTargetsSchema = z
  .object({
    ttftMs: z.number().positive().finite().optional(),
    tpotMs: z.number().positive().finite().optional(),
    totalMs: z.number().positive().finite().optional(),
  })
  .strict();

function acceptedNames(): string {
  return Object.entries(SLO_NAMES).map(([camel, snake]) => `${camel} (${snake})`).join(', ');
}

/**
 * Reads SLO objectives given by a caller (a library option, a sweep file): each key is a known objective in camelCase
 * or snake_case, a positive number of milliseconds. Anything else is refused, naming the key and the accepted names,
 * so that an objective is never silently ignored. `where` names the place in messages (`analyzeResults slo`).
 */
export function readSloTargets(input: unknown, where: string): SloTargets {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ServelabError('INVALID_CONFIG', `${where} must be an object of objectives in milliseconds, e.g. { ttftMs: 500 }; got ${JSON.stringify(input)}`);
  }
  const targets: Record<string, number> = {};
  const byName = new Map<string, keyof SloTargets>();
  for (const [camel, snake] of Object.entries(SLO_NAMES) as [keyof SloTargets, string][]) {
    byName.set(camel, camel);
    byName.set(snake, camel);
  }
  for (const [key, value] of Object.entries(input as Record<string, unknown>)) {
    const name = byName.get(key);
    if (name === undefined) {
      throw new ServelabError('INVALID_CONFIG', `${where}: unknown objective "${key}"; use ${acceptedNames()}, in milliseconds.${didYouMean(key, [...byName.keys()])}`);
    }
    if (value === undefined) continue;
    if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) {
      throw new ServelabError('INVALID_CONFIG', `${where}.${key} must be a number of milliseconds above 0, got ${JSON.stringify(value)}`);
    }
    if (name in targets && !isDeepStrictEqual(targets[name], value)) {
      throw new ServelabError('INVALID_CONFIG', `${where}: ${name} and ${SLO_NAMES[name]} are the same objective with different values (${targets[name]} and ${value}); give it once`);
    }
    targets[name] = value;
  }
  return targets as SloTargets;
}
