import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { ServelabError } from '../errors/servelab-error.js';

/** Reads a YAML (or JSON, which YAML includes) settings file, with errors that name the file and the problem. */
export async function readSettingsFile(path: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw new ServelabError('FILE_NOT_FOUND', `cannot read the ${what} ${path}; check the path`);
  }
  try {
    return parseYaml(text) as unknown;
  } catch (error) {
    throw new ServelabError('INVALID_CONFIG', `${path} is not valid YAML or JSON: ${(error as Error).message.split('\n')[0]}`);
  }
}
