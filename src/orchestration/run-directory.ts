import { existsSync } from 'node:fs';
import { mkdir, open, readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ServelabError } from '../errors/servelab-error.js';

/** A sortable, readable run id: `20261121-081503-node-3f9a`. */
export function newRunId(testLevel: string, now = new Date()): string {
  const pad = (value: number): string => String(value).padStart(2, '0');
  const stamp = `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}-${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`;
  return `${stamp}-${testLevel}-${randomBytes(2).toString('hex')}`;
}

export interface RunDirectory {
  runId: string;
  path: string;
  logsPath: string;
}

/** Files whose presence means a directory already holds a run's results. */
const RUN_FILES = ['summary.json', 'requests.csv', 'requests.jsonl', 'requests.parquet'];

/**
 * The claim on a run directory: created with O_EXCL before anything else is written there, so of two runs racing for
 * one new directory exactly one gets it (checking for files first and creating them later leaves a window in which
 * both pass the check and then write over each other's records). It stays with the run's files: it names the run.
 */
export const RUN_CLAIM_FILE = '.servelab-run';

/**
 * Creates `results/<run-id>/` (or the directory given) with its `logs/` folder, and claims it for this run alone. A
 * directory that already holds a run, or that another run has claimed, is refused: writing into it would mix two
 * runs' files and overwrite what was measured before.
 */
export async function createRunDirectory(options: { outputDir?: string; resultsRoot: string; runId?: string; testLevel: string }): Promise<RunDirectory> {
  const runId = options.runId ?? newRunId(options.testLevel);
  const path = resolve(options.outputDir ?? join(options.resultsRoot, runId));
  const existing = await stat(path).catch(() => undefined);
  if (existing !== undefined && !existing.isDirectory()) {
    throw new ServelabError('INVALID_CONFIG', `the output directory ${path} is a file; give --output-dir a directory (new or empty)`);
  }
  // A finished run (its summary written) is named as such, though its claim file stays with it; a run still writing
  // is named by its claim; a directory with run files and no claim (older servelab, or copied) by those files.
  const finished = existsSync(join(path, 'summary.json'));
  if (!finished) await refuseIfClaimed(path);
  const previous = RUN_FILES.find((file) => existsSync(join(path, file)));
  if (previous !== undefined) {
    throw new ServelabError('INVALID_CONFIG', `the output directory ${path} already holds a run (${previous}); choose a new --output-dir, or move that run away first`);
  }
  if (existing !== undefined) {
    // Refused as the messages promise ("new or empty"): a run's files must never mix with anything else's.
    const entries = await readdir(path).catch(() => [] as string[]);
    if (entries.length > 0) {
      const shown = entries.slice(0, 3).map((entry) => JSON.stringify(entry)).join(', ');
      throw new ServelabError(
        'INVALID_CONFIG',
        `the output directory ${path} is not empty (${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}: ${shown}${entries.length > 3 ? ', ...' : ''}); give --output-dir a new or empty directory`,
      );
    }
  }
  const logsPath = join(path, 'logs');
  try {
    await makeDirectories(path);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new ServelabError('INVALID_CONFIG', `cannot create the output directory ${path} (${reason}); choose a writable --output-dir`, { cause: error });
  }
  await claim(path, runId);
  await mkdir(logsPath).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw new ServelabError('INVALID_CONFIG', `cannot create ${logsPath} (${error.code ?? error.message}); choose a writable --output-dir`, { cause: error });
  });
  return { runId, path, logsPath };
}

/** Creates the claim file exclusively; the loser of a race gets the same refusal as a later run. */
async function claim(path: string, runId: string): Promise<void> {
  let handle;
  try {
    handle = await open(join(path, RUN_CLAIM_FILE), 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      await refuseIfClaimed(path);
      throw claimedError(path, undefined);
    }
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new ServelabError('INVALID_CONFIG', `cannot claim the output directory ${path} (${reason}); choose a writable --output-dir`, { cause: error });
  }
  try {
    await handle.writeFile(`${JSON.stringify({ run_id: runId, pid: process.pid })}\n`);
  } finally {
    await handle.close();
  }
}

async function refuseIfClaimed(path: string): Promise<void> {
  // Unreadable or absent: no claim to name here; the exclusive create in claim() decides.
  const text = await readFile(join(path, RUN_CLAIM_FILE), 'utf8').catch(() => undefined);
  if (text === undefined) return;
  let owner: string | undefined;
  try {
    const parsed = JSON.parse(text) as { run_id?: unknown; pid?: unknown };
    if (typeof parsed.run_id === 'string') owner = `run ${parsed.run_id}${typeof parsed.pid === 'number' ? `, pid ${parsed.pid}` : ''}`;
  } catch {
    // Being written by the other run this very moment: it is claimed all the same.
  }
  throw claimedError(path, owner);
}

function claimedError(path: string, owner: string | undefined): ServelabError {
  return new ServelabError(
    'INVALID_CONFIG',
    `the output directory ${path} belongs to another servelab run${owner === undefined ? '' : ` (${owner})`}; give this run its own --output-dir`,
  );
}

/**
 * `mkdir -p`, one level at a time from the nearest existing ancestor. Why not `mkdir(path, { recursive: true })`:
 * where a parent exists but refuses a new entry with ENOENT (under /proc, for one), Node's recursive mkdir retries
 * forever instead of failing; one level at a time, the first refusal is an error naming the problem.
 */
async function makeDirectories(path: string): Promise<void> {
  const missing: string[] = [];
  let current = path;
  while ((await stat(current).catch(() => undefined)) === undefined) {
    missing.push(current);
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const directory of missing.reverse()) {
    await mkdir(directory).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
  }
}
