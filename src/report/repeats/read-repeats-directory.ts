import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ServelabError } from '../../errors/servelab-error.js';
import { parseJson } from '../json-format.js';
import { readRunDirectory, type LoadedRun } from '../run-directory.js';
import { isRepeatsFile, type RepeatsFile } from './repeats-file.js';

/** A repeats directory read back: its combined file and every repeat's run. */
export interface LoadedRepeats {
  directory: string;
  file: RepeatsFile;
  repeats: LoadedRun[];
}

/** The repeats directory's summary.json when `directory` is one; undefined for anything else (a run directory). */
export async function repeatsFileOf(directory: string): Promise<RepeatsFile | undefined> {
  const path = join(directory, 'summary.json');
  if (!existsSync(path) || existsSync(join(directory, 'config.json'))) return undefined;
  const parsed = await readFile(path, 'utf8').then(parseJson, () => undefined);
  return isRepeatsFile(parsed) ? parsed : undefined;
}

/** Reads every repeat a repeats directory lists; one that cannot be read is refused, naming it. */
export async function readRepeatsDirectory(directory: string, file: RepeatsFile): Promise<LoadedRepeats> {
  if (file.runs.length === 0) throw new ServelabError('INVALID_RUN_DIRECTORY', `${directory} lists no repeats in its summary.json; run the test again with --repeats`);
  const repeats: LoadedRun[] = [];
  for (const entry of file.runs) repeats.push(await readRunDirectory(join(directory, entry.directory)));
  return { directory, file, repeats };
}
