import { InvalidArgumentError, Option, type Command } from 'commander';
import { didYouMean } from '../../utils/did-you-mean.js';

/** One command-line flag and the config key it sets. Tables of these generate commander options and map values back. */
export interface FlagSpec {
  flag: string;
  key: string;
  description: string;
  /** `value` flags take an argument; `boolean` flags are switches; `negatable` adds `--no-x` for a default-on switch. */
  kind: 'value' | 'boolean' | 'negatable';
  valueName?: string;
  parse?: (raw: string) => unknown;
  /** Shown in --help; the real default lives in the config schema. */
  defaultText?: string;
  choices?: readonly string[];
  group?: string;
  /** Several occurrences collect into an array. */
  repeatable?: boolean;
}

export function parseNumber(raw: string): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value)) throw new InvalidArgumentError('expected a number.');
  return value;
}

export function parseInteger(raw: string): number {
  const value = parseNumber(raw);
  if (!Number.isInteger(value)) throw new InvalidArgumentError('expected a whole number.');
  return value;
}

/** A rate in req/s; `inf` (or `infinity`) means every request at once, as in SGLang's bench_serving. */
export function parseRate(raw: string): number {
  if (/^(inf|infinity)$/i.test(raw.trim())) return Infinity;
  const value = Number(raw);
  if (raw.trim() === '' || Number.isNaN(value)) throw new InvalidArgumentError('expected requests per second (a number above 0) or inf.');
  return value;
}

export function parseIntegerList(raw: string): number | number[] {
  const parts = raw.split(',').map((part) => parseInteger(part.trim()));
  return parts.length === 1 ? (parts[0] as number) : parts;
}

/** `ttft=200,tpot=50,total=10000` (milliseconds) → `{ ttftMs: 200, tpotMs: 50, totalMs: 10000 }`. */
export function parseSlo(raw: string): Record<string, number> {
  const names: Record<string, string> = { ttft: 'ttftMs', tpot: 'tpotMs', total: 'totalMs' };
  const objectives: Record<string, number> = {};
  for (const part of raw.split(',')) {
    const [name, value] = part.split('=').map((piece) => piece.trim());
    const key = names[name ?? ''];
    const milliseconds = Number(value);
    if (key === undefined || value === undefined || !(milliseconds > 0)) {
      throw new InvalidArgumentError('expected name=milliseconds pairs from ttft, tpot, total, e.g. ttft=200,tpot=50.');
    }
    objectives[key] = milliseconds;
  }
  return objectives;
}

export function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw new InvalidArgumentError('expected JSON, e.g. \'{"2": [1], "5": []}\'.');
  }
}

export function addFlags(command: Command, flags: readonly FlagSpec[]): void {
  for (const spec of flags) {
    const name = spec.kind === 'negatable' ? `--no-${spec.flag}` : `--${spec.flag}`;
    const signature = spec.kind === 'value' ? `${name} <${spec.valueName ?? 'value'}>` : name;
    const description = spec.defaultText === undefined ? spec.description : `${spec.description} (default: ${spec.defaultText})`;
    const option = new Option(signature, description);
    if (spec.choices !== undefined) {
      const choices = spec.choices;
      option.choices(choices);
      // commander's own check lists the choices; this one also suggests the closest (`shared_prefix` → shared-prefix).
      option.argParser((raw: string) => {
        if (!choices.includes(raw)) throw new InvalidArgumentError(`Allowed choices are ${choices.join(', ')}.${didYouMean(raw, choices)}`);
        return raw;
      });
    }
    if (spec.group !== undefined) option.helpGroup(spec.group);
    if (spec.kind === 'value' && spec.parse !== undefined) {
      const parse = spec.parse;
      option.argParser(spec.repeatable === true ? (raw: string, previous: unknown) => [...((previous as unknown[] | undefined) ?? []), parse(raw)] : parse);
    } else if (spec.repeatable === true) {
      option.argParser((raw: string, previous: unknown) => [...((previous as string[] | undefined) ?? []), raw]);
    }
    command.addOption(option);
  }
}

/** Turns commander's parsed options into config entries, keeping only flags the user actually gave. */
export function flagsToConfig(command: Command, flags: readonly FlagSpec[]): Record<string, unknown> {
  const values = command.opts<Record<string, unknown>>();
  const config: Record<string, unknown> = {};
  for (const spec of flags) {
    const attribute = camelCase(spec.flag);
    const source = command.getOptionValueSource(attribute);
    if (source === undefined || source === 'default' || source === 'implied') continue;
    const value = values[attribute];
    if (value === undefined) continue;
    setPath(config, spec.key, value);
  }
  return config;
}

function camelCase(flag: string): string {
  return flag.replace(/-([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let cursor = target;
  for (const key of keys.slice(0, -1)) {
    cursor[key] ??= {};
    cursor = cursor[key] as Record<string, unknown>;
  }
  cursor[keys[keys.length - 1] as string] = value;
}
