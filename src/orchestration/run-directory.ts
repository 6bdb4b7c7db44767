import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';

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

/** Creates `results/<run-id>/` (or the directory given) with its `logs/` folder. */
export async function createRunDirectory(options: { outputDir?: string; resultsRoot: string; runId?: string; testLevel: string }): Promise<RunDirectory> {
  const runId = options.runId ?? newRunId(options.testLevel);
  const path = resolve(options.outputDir ?? join(options.resultsRoot, runId));
  const logsPath = join(path, 'logs');
  await mkdir(logsPath, { recursive: true });
  return { runId, path, logsPath };
}
