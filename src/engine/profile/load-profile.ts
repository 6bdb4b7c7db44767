import { didYouMean } from '../../utils/did-you-mean.js';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServelabError } from '../../errors/servelab-error.js';
import type { EngineProfile } from '../../types/engine.js';
import { engineProfileSchema } from './profile-schema.js';

export const DEFAULT_PROFILE_NAME = 'llama-3-8b-h100';

/**
 * The built-in profiles live in `profiles/` at the package root. This module sits at `src/engine/profile/` in the
 * source tree and at `dist/src/engine/profile/` when built, so walk up until the folder is found.
 */
export function builtinProfilesDirectory(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  for (let level = 0; level < 6; level++) {
    const candidate = join(directory, 'profiles');
    if (existsSync(join(candidate, `${DEFAULT_PROFILE_NAME}.json`))) return candidate;
    directory = dirname(directory);
  }
  throw new ServelabError('INTERNAL', 'the built-in profiles folder (profiles/) was not found beside the package');
}

export function builtinProfileNames(): string[] {
  return readdirSync(builtinProfilesDirectory())
    .filter((file) => file.endsWith('.json'))
    .map((file) => file.slice(0, -'.json'.length))
    .sort();
}

/**
 * Resolves a profile given as a built-in name (`llama-3-8b-h100`), a path to a JSON file, inline JSON
 * (`{"kind":"simple","stepMs":10}`), or an already-parsed object.
 */
export function loadProfile(source: string | EngineProfile = DEFAULT_PROFILE_NAME): EngineProfile {
  if (typeof source !== 'string') return validateProfile(source, 'the given profile object');
  const trimmed = source.trim();
  if (trimmed.startsWith('{')) return validateProfile(parseJson(trimmed, 'the inline profile'), 'the inline profile');
  const looksLikePath = trimmed.includes('/') || trimmed.includes('\\') || trimmed.endsWith('.json');
  if (!looksLikePath) {
    const names = builtinProfileNames();
    if (!names.includes(trimmed)) {
      throw new ServelabError(
        'INVALID_PROFILE',
        `unknown profile "${trimmed}": use one of ${names.join(', ')}, a path to a profile JSON file, or ` +
          `'{"kind":"simple","stepMs":10}'.${didYouMean(trimmed, names)}`,
      );
    }
    const path = join(builtinProfilesDirectory(), `${trimmed}.json`);
    return validateProfile(parseJson(readFileSync(path, 'utf8'), path), path);
  }
  const path = resolve(trimmed);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ServelabError('INVALID_PROFILE', `cannot read profile file ${path}: check the path`, { cause: error });
  }
  return validateProfile(parseJson(text, path), path);
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ServelabError('INVALID_PROFILE', `${where} is not valid JSON: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

function validateProfile(value: unknown, where: string): EngineProfile {
  const parsed = engineProfileSchema.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
      .join('; ');
    throw new ServelabError(
      'INVALID_PROFILE',
      `${where} is not a valid profile (${problems}); a profile is {"kind":"simple","stepMs":N}, a "roofline" ` +
        `profile like profiles/${DEFAULT_PROFILE_NAME}.json, or a "measured" table written by servelab calibrate --measured-output`,
    );
  }
  return parsed.data as EngineProfile;
}
