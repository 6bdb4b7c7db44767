import { createReadStream, existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { isRepeatsFile } from './repeats/repeats-file.js';
import { ServelabError } from '../errors/servelab-error.js';
import type { RequestRecord } from '../types/record.js';
import type { RecoveryInfo, RunData, RunInfo, TargetKind, TestLevel } from '../types/run.js';
import { servelabVersion } from '../utils/version.js';
import { CONFIG_JSON } from './config/config-reporter.js';
import { REQUESTS_JSONL, recordFromJsonObject } from './jsonl/jsonl-reporter.js';
import { parseJson } from './json-format.js';
import { READABLE_SUMMARY_FORMAT_VERSIONS, SUMMARY_FORMAT_VERSION, SUMMARY_JSON, decodeSummaryFile, noticesFromFile, type SummaryFile } from './summary/summary-file.js';

/** The files a run directory must hold for `servelab report`, `servelab compare` and `analyzeResults`. */
export const REQUIRED_RUN_FILES: readonly string[] = [REQUESTS_JSONL, CONFIG_JSON];

/** Files the built-in reporters write from the records; those missing are what a recovery rebuilds. */
const DERIVED_FILES: readonly string[] = [SUMMARY_JSON, 'requests.csv', 'requests.parquet', 'timeseries.csv', 'nodes.csv', 'report.html'];

export interface LoadedRun {
  directory: string;
  run: RunData;
  /**
   * summary.json as written by the run (its metrics, before any re-analysis), with the in-memory names whatever format
   * version wrote it (`formatVersion` says which); absent when it was not on disk.
   */
  summaryFile?: SummaryFile;
}

function invalid(directory: string, problem: string): ServelabError {
  return new ServelabError('INVALID_RUN_DIRECTORY', `${directory} is not a complete servelab run directory: ${problem}`);
}

async function readJsonFile(directory: string, name: string): Promise<unknown> {
  try {
    return parseJson(await readFile(join(directory, name), 'utf8'));
  } catch (error) {
    throw invalid(directory, `${name} is not valid JSON (${(error as Error).message}).`);
  }
}

/**
 * requests.jsonl, one line at a time (a file of several GB never becomes one string). A line that is not a whole JSON
 * record is allowed only last (a run killed mid-write can tear only the line it was writing) and is counted.
 */
async function readRecords(directory: string, t0: number): Promise<{ records: RequestRecord[]; droppedLines: number }> {
  const records: RequestRecord[] = [];
  const lines = createInterface({ input: createReadStream(join(directory, REQUESTS_JSONL), { encoding: 'utf8', highWaterMark: 1 << 20 }), crlfDelay: Infinity });
  let torn: { lineNumber: number; message: string } | undefined;
  let lineNumber = 0;
  for await (const line of lines) {
    lineNumber++;
    if (line.trim() === '') continue;
    if (torn !== undefined) throw invalid(directory, `${REQUESTS_JSONL} line ${torn.lineNumber} is not JSON (${torn.message}).`);
    try {
      records.push(recordFromJsonObject(JSON.parse(line) as Record<string, unknown>, t0));
    } catch (error) {
      torn = { lineNumber, message: (error as Error).message };
    }
  }
  return { records, droppedLines: torn === undefined ? 0 : 1 };
}

/** The run id from the first record's request id (`<run-id>-<index>`), else the directory's name. */
function runIdOf(directory: string, config: Record<string, unknown>, records: readonly RequestRecord[]): string {
  if (typeof config.runId === 'string') return config.runId;
  const match = records[0]?.requestId.match(/^(.+)-\d+$/);
  return match?.[1] ?? basename(directory);
}

/**
 * What the run was, for a directory whose summary.json is missing or provisional (the run was killed): from the
 * provisional summary when there is one (it holds t0), else from config.json, with t0 unknown (0).
 */
function recoveredInfo(directory: string, config: Record<string, unknown>, provisional: SummaryFile | undefined, records: readonly RequestRecord[]): RunInfo {
  let endTime = provisional?.run.t0 ?? 0;
  for (const record of records) {
    const end = record.finishTime ?? record.arrivalTime ?? record.scheduledTime;
    if (end > endTime) endTime = end;
  }
  const base = provisional?.run;
  const requestRate = base?.requestRate ?? config.requestRate;
  return {
    runId: base?.runId ?? runIdOf(directory, config, records),
    testLevel: base?.testLevel ?? (config.test === 'routing' ? 'routing' : 'node') satisfies TestLevel,
    target: base?.target ?? ((typeof config.target === 'string' ? config.target : 'sim') as TargetKind),
    // It did not finish: whatever ended it, the measurement stopped early.
    status: 'interrupted',
    startTime: base?.t0 ?? 0,
    endTime,
    requestRate: typeof requestRate === 'number' ? requestRate : Number.NaN,
    simulated: config.virtualTime === true,
    servelabVersion: base?.servelabVersion ?? servelabVersion,
  };
}

/**
 * Reads a run directory back into RunData (epoch times again) from requests.jsonl, config.json and summary.json.
 * A directory whose run was killed (summary.json missing, or the provisional one a run writes at t0) is recovered
 * from its records: `run.recovered` then says how much. Refuses, naming what is wrong, a directory without records
 * or config, or one another summary format version wrote.
 */
export async function readRunDirectory(directory: string): Promise<LoadedRun> {
  const info = await stat(directory).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new ServelabError('INVALID_RUN_DIRECTORY', `${directory} is not a directory. Give the directory a run wrote (results/<run-id>/ or its --output-dir).`);
  }
  if (existsSync(join(directory, SUMMARY_JSON)) && !existsSync(join(directory, 'config.json'))) {
    const parsed = await readJsonFile(directory, SUMMARY_JSON).catch(() => undefined);
    if (isRepeatsFile(parsed)) {
      throw invalid(directory, `it holds ${parsed.repeats} repeats of a test (repeat-1 .. repeat-${parsed.repeats}/ are its runs); give one of them, or compare the repeats directory as a whole (servelab compare).`);
    }
  }
  const missing = REQUIRED_RUN_FILES.filter((file) => !existsSync(join(directory, file)));
  if (missing.length > 0) {
    throw invalid(directory, `missing ${missing.join(', ')} (a run writes ${REQUIRED_RUN_FILES.join(' and ')} as it starts and runs; without them nothing can be rebuilt).`);
  }
  let summaryFile: SummaryFile | undefined;
  if (existsSync(join(directory, SUMMARY_JSON))) {
    summaryFile = decodeSummaryFile(await readJsonFile(directory, SUMMARY_JSON));
    if (summaryFile?.format !== 'servelab-summary' || typeof summaryFile.run !== 'object' || summaryFile.run === null) {
      throw invalid(directory, `${SUMMARY_JSON} was not written by servelab (no "format": "servelab-summary" with a run).`);
    }
    if (!READABLE_SUMMARY_FORMAT_VERSIONS.includes(summaryFile.formatVersion)) {
      throw invalid(
        directory,
        `${SUMMARY_JSON} has format version ${String(summaryFile.formatVersion)} (servelab ${String(summaryFile.run.servelabVersion)}), this servelab reads versions ${READABLE_SUMMARY_FORMAT_VERSIONS.join(' and ')} (it writes ${SUMMARY_FORMAT_VERSION}). Use the servelab version that wrote it.`,
      );
    }
    if (typeof summaryFile.run.t0 !== 'number') {
      throw invalid(directory, `${SUMMARY_JSON} has no run.${summaryFile.formatVersion === 1 ? 't0' : 't0EpochSeconds'} (the run's t0, epoch seconds).`);
    }
  }
  const config = (await readJsonFile(directory, CONFIG_JSON)) as Record<string, unknown>;
  const complete = summaryFile !== undefined && summaryFile.provisional !== true;
  const t0 = summaryFile?.run.t0 ?? 0;
  const { records, droppedLines } = await readRecords(directory, t0);
  let runInfo: RunInfo;
  let recovered: RecoveryInfo | undefined = summaryFile?.recovered;
  if (complete) {
    const { t0: _t0, ...fromFile } = (summaryFile as SummaryFile).run;
    // A run without a single target rate has requestRate NaN, which JSON stores as null.
    runInfo = { ...fromFile, requestRate: typeof fromFile.requestRate === 'number' ? fromFile.requestRate : Number.NaN };
  } else {
    // The journal appends records as they finish; analysis and files want them in the order they were scheduled.
    records.sort((a, b) => a.scheduledTime - b.scheduledTime);
    runInfo = recoveredInfo(directory, config, summaryFile, records);
    recovered = {
      records: records.length,
      droppedLines,
      t0Known: summaryFile !== undefined,
      missingFiles: DERIVED_FILES.filter((file) => (file === SUMMARY_JSON ? true : !existsSync(join(directory, file)))).filter(
        (file) => file !== 'nodes.csv' || runInfo.testLevel === 'routing',
      ),
    };
  }
  const run: RunData = {
    info: runInfo,
    config,
    records,
    events: (summaryFile?.events ?? []).map((event) => ({ ...event, time: event.time + runInfo.startTime })),
    ...(summaryFile?.extras === undefined ? {} : { extras: summaryFile.extras }),
    ...(summaryFile?.notices === undefined || summaryFile.notices.length === 0 ? {} : { notices: noticesFromFile(summaryFile.notices, runInfo.startTime) }),
    ...(recovered === undefined ? {} : { recovered }),
  };
  return { directory, run, ...(complete ? { summaryFile } : {}) };
}
