import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ServelabError } from '../errors/servelab-error.js';
import type { RequestRecord } from '../types/record.js';
import type { RunData } from '../types/run.js';
import { CONFIG_JSON } from './config/config-reporter.js';
import { REQUESTS_JSONL, recordFromJsonObject } from './jsonl/jsonl-reporter.js';
import { parseJson } from './json-format.js';
import { SUMMARY_FORMAT_VERSION, SUMMARY_JSON, type SummaryFile } from './summary/summary-file.js';

/** The files `servelab report` and `servelab compare` need in a run directory. */
export const REQUIRED_RUN_FILES: readonly string[] = [SUMMARY_JSON, REQUESTS_JSONL, CONFIG_JSON];

export interface LoadedRun {
  directory: string;
  run: RunData;
  /** summary.json as written by the run (its metrics, before any re-analysis). */
  summaryFile: SummaryFile;
}

function invalid(directory: string, problem: string): ServelabError {
  return new ServelabError('INVALID_RUN_DIRECTORY', `${directory} is not a complete servelab run directory: ${problem}`);
}

/**
 * Reads a run directory back into RunData (epoch times again) from summary.json, requests.jsonl and config.json.
 * Refuses, naming what is wrong, a directory that misses any of them or that another summary format version wrote.
 */
export async function readRunDirectory(directory: string): Promise<LoadedRun> {
  const info = await stat(directory).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new ServelabError('INVALID_RUN_DIRECTORY', `${directory} is not a directory. Give the directory a run wrote (results/<run-id>/ or its --output-dir).`);
  }
  const missing = REQUIRED_RUN_FILES.filter((file) => !existsSync(join(directory, file)));
  if (missing.length > 0) {
    throw invalid(directory, `missing ${missing.join(', ')} (a run writes ${REQUIRED_RUN_FILES.join(', ')}; an interrupted run writes them too).`);
  }
  let summaryFile: SummaryFile;
  try {
    summaryFile = parseJson(await readFile(join(directory, SUMMARY_JSON), 'utf8')) as SummaryFile;
  } catch (error) {
    throw invalid(directory, `${SUMMARY_JSON} is not valid JSON (${(error as Error).message}).`);
  }
  if (summaryFile?.format !== 'servelab-summary' || typeof summaryFile.run?.t0 !== 'number') {
    throw invalid(directory, `${SUMMARY_JSON} was not written by servelab (no "format": "servelab-summary" with run.t0).`);
  }
  if (summaryFile.formatVersion !== SUMMARY_FORMAT_VERSION) {
    throw invalid(
      directory,
      `${SUMMARY_JSON} has format version ${String(summaryFile.formatVersion)} (servelab ${summaryFile.run.servelabVersion}), this servelab reads version ${SUMMARY_FORMAT_VERSION}. Use the servelab version that wrote it.`,
    );
  }
  const t0 = summaryFile.run.t0;
  const records: RequestRecord[] = [];
  const lines = (await readFile(join(directory, REQUESTS_JSONL), 'utf8')).split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as string;
    if (line.trim() === '') continue;
    try {
      records.push(recordFromJsonObject(JSON.parse(line) as Record<string, unknown>, t0));
    } catch (error) {
      // A run killed mid-write can only tear the last line (files are written atomically, so not even that).
      if (index >= lines.length - 2) continue;
      throw invalid(directory, `${REQUESTS_JSONL} line ${index + 1} is not JSON (${(error as Error).message}).`);
    }
  }
  let config: Record<string, unknown>;
  try {
    config = parseJson(await readFile(join(directory, CONFIG_JSON), 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw invalid(directory, `${CONFIG_JSON} is not valid JSON (${(error as Error).message}).`);
  }
  const { t0: _t0, ...runInfo } = summaryFile.run;
  const run: RunData = {
    // A run without a single target rate has requestRate NaN, which JSON stores as null.
    info: { ...runInfo, requestRate: typeof runInfo.requestRate === 'number' ? runInfo.requestRate : Number.NaN },
    config,
    records,
    events: (summaryFile.events ?? []).map((event) => ({ ...event, time: event.time + t0 })),
    ...(summaryFile.extras === undefined ? {} : { extras: summaryFile.extras }),
  };
  return { directory, run, summaryFile };
}
