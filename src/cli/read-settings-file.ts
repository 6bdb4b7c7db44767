import { readFile, stat } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { MAX_SETTINGS_FILE_BYTES } from '../config/size-limits.js';
import { ServelabError } from '../errors/servelab-error.js';

/** Reads a YAML (or JSON, which YAML includes) settings file, with errors that name the file and the problem. */
export async function readSettingsFile(path: string, what: string): Promise<unknown> {
  let text: string;
  try {
    // Size first: a YAML parse of hundreds of megabytes ends in a V8 abort, not a message.
    const { size } = await stat(path);
    if (size > MAX_SETTINGS_FILE_BYTES) {
      throw new ServelabError('INVALID_CONFIG', `the ${what} ${path} holds ${size} bytes, above the ${MAX_SETTINGS_FILE_BYTES} (${MAX_SETTINGS_FILE_BYTES / 2 ** 20} MiB) a settings file may have; put data in a dataset or trace file and name it in the settings`);
    }
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (error instanceof ServelabError) throw error;
    throw new ServelabError('FILE_NOT_FOUND', `cannot read the ${what} ${path}; check the path`);
  }
  try {
    return parseYaml(text) as unknown;
  } catch (error) {
    throw new ServelabError('INVALID_CONFIG', `${path} is not valid YAML or JSON: ${(error as Error).message.split('\n')[0]}`);
  }
}
