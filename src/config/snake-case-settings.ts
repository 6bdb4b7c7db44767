import { isDeepStrictEqual } from 'node:util';
import { ServelabError } from '../errors/servelab-error.js';
import { routingTestConfigSchema } from './schema.js';
import { SLO_NAMES } from './slo-targets.js';

/** `model_path` → `modelPath`, `ttft_ms` → `ttftMs`. */
export function toCamelCase(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

/** Every setting name of either test level (the routing schema holds the node schema's too). */
const SETTING_NAMES = new Set(Object.keys(routingTestConfigSchema.shape));
/** Settings whose value is an object, or a list of objects, with camelCase keys of its own. */
const NESTED_SETTINGS = new Set(['slo', 'stages', 'failureSchedule']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * One level of keys: each snake_case key becomes its camelCase name when that is a known name (`known` undefined: any
 * name, for nested objects). A key given both ways with different values is refused, naming both; an unknown snake_case
 * key is left as it is, so that validation reports it under the name the user wrote.
 */
function camelCaseKeys(input: Record<string, unknown>, known: Set<string> | undefined, where: string): Record<string, unknown> {
  const output: Record<string, unknown> = { ...input };
  for (const [key, value] of Object.entries(input)) {
    if (!key.includes('_')) continue;
    const camel = toCamelCase(key);
    if (camel === key || (known !== undefined && !known.has(camel))) continue;
    if (camel in input && !isDeepStrictEqual(input[camel], value)) {
      throw new ServelabError(
        'INVALID_CONFIG',
        `invalid configuration: ${where}${key} and ${where}${camel} are the same setting with different values (${JSON.stringify(value)} and ${JSON.stringify(input[camel])}); give it once`,
      );
    }
    delete output[key];
    output[camel] = value;
  }
  return output;
}

/**
 * The first users' snake_case names (`model_path`, `request_rate`, `num_prompts`, `routing_policy`, `slo.ttft_ms`,
 * `failure_schedule[].at_s`, ...) as servelab's canonical camelCase ones, so that their configs load unchanged in the
 * library and in `servelab run` files. camelCase stays canonical: config.json and every message use it.
 */
export function camelCaseSettings(input: Record<string, unknown>): Record<string, unknown> {
  const settings = camelCaseKeys(input, SETTING_NAMES, '');
  for (const name of NESTED_SETTINGS) {
    const value = settings[name];
    // Only known objectives are renamed, so an unknown one is refused under the name the user wrote.
    if (isPlainObject(value) && name === 'slo') settings[name] = camelCaseKeys(value, new Set(Object.keys(SLO_NAMES)), `${name}.`);
    if (Array.isArray(value)) settings[name] = value.map((entry, index) => (isPlainObject(entry) ? camelCaseKeys(entry, undefined, `${name}[${index}].`) : entry));
  }
  return settings;
}
