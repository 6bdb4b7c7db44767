import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseCsv } from '../../src/report/csv/csv-format.js';

/** One row of requests.csv: its cells by column name (a column the file lacks reads as undefined). */
export type RequestRow = Readonly<Record<string, string | undefined>>;

/** The requests of a run, as its requests.csv in `outputDir` lists them, in the file's order. */
export async function readRequestRows(outputDir: string): Promise<RequestRow[]> {
  const [header = [], ...body] = parseCsv(await readFile(join(outputDir, 'requests.csv'), 'utf8'));
  return body.map((cells) => Object.fromEntries(header.map((name, index) => [name, cells[index]])));
}
