import type { z } from 'zod';
import { ServelabError } from '../errors/servelab-error.js';
import { didYouMean } from '../utils/did-you-mean.js';

/** `maxRunningRequests` → `--max-running-requests`, so each message names the flag and the config key alike. */
export function toKebabCase(key: string): string {
  return key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const key = issue.path.map(String).join('.');
  const name = key === '' ? 'the configuration' : `${key} (--${toKebabCase(String(issue.path[0]))})`;
  if (issue.code === 'unrecognized_keys') {
    return `${name}: unknown setting${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((unknown) => `"${unknown}"`).join(', ')}; check the spelling (settings are camelCase or snake_case in files, kebab-case on the command line)`;
  }
  if (issue.code === 'invalid_value') {
    const allowed = issue.values.map((value) => String(value));
    const given = issue.input;
    return `${name}: must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}${typeof given === 'string' ? `, not "${given}".${didYouMean(given, allowed)}` : ''}`;
  }
  return `${name}: ${issue.message}`;
}

/**
 * Validates a configuration before anything starts. Every problem is listed, each naming the setting and what is
 * allowed, in one INVALID_CONFIG error.
 */
export function parseConfig<Schema extends z.ZodType>(schema: Schema, input: unknown): z.output<Schema> {
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  const lines = result.error.issues.map(describeIssue);
  const [first, ...rest] = lines;
  throw new ServelabError('INVALID_CONFIG', `invalid configuration: ${first ?? 'unknown problem'}`, {
    details: rest.length > 0 ? rest.map((line) => `  also: ${line}`).join('\n') : undefined,
  });
}
