import { lstat, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ServelabError } from '../errors/servelab-error.js';
import { correctRunClocks } from '../analysis/clock-offset/correct-run-clocks.js';
import { summarize } from '../analysis/summarize.js';
import type { RecoveryInfo, RunData } from '../types/run.js';
import type { SloTargets, Summary } from '../types/summary.js';
import { removeStaleTemporaryFiles } from '../utils/atomic-write.js';
import { CHARTS_DIRECTORY } from './charts/charts-reporter.js';
import { DEFAULT_REPORTER_NAMES } from './registry.js';
import { readRunDirectory, type LoadedRun } from './run-directory.js';
import { writeRunFilesReportingFailures, type ReporterFailure } from './write-run-files.js';

export interface RegenerateOptions {
  /** Reporters to run (default: every built-in one). */
  reporterNames?: readonly string[];
  /** Goodput objectives; default: the ones the run used (from its summary.json, else its config.json). */
  slo?: SloTargets;
}

export interface RegeneratedRun {
  run: RunData;
  summary: Summary;
  written: string[];
  /** Reporters that failed (each is also a notice in summary.json). */
  failures: ReporterFailure[];
  /** Present when the directory was incomplete (a killed run) and was rebuilt from its records. */
  recovered?: RecoveryInfo;
  /** Temporary files a killed writer had left behind, removed. */
  removedTemporaryFiles: string[];
}

/** The goodput objectives a run used: its summary's, else its configuration's. */
export function runSlo(loaded: LoadedRun): SloTargets | undefined {
  return loaded.summaryFile?.metrics?.goodput?.slo ?? (loaded.run.config.slo as SloTargets | undefined);
}

/**
 * `servelab report DIR`: reads a run directory back, re-analyzes it and rewrites every file from the data. A directory
 * a killed run left (config.json and requests.jsonl, perhaps a provisional summary.json) is rebuilt whole.
 */
export async function regenerateReport(directory: string, options: RegenerateOptions = {}): Promise<RegeneratedRun> {
  await refuseLinkedChartsDirectory(directory);
  const removedTemporaryFiles = await removeStaleTemporaryFiles(directory);
  const loaded = await readRunDirectory(directory);
  const slo = options.slo ?? runSlo(loaded);
  const run = correctRunClocks(loaded.run);
  const summary = summarize(run, slo === undefined ? {} : { slo });
  const { written, failures } = await writeRunFilesReportingFailures(run, summary, directory, options.reporterNames ?? DEFAULT_REPORTER_NAMES);
  return {
    run,
    summary,
    written,
    failures,
    ...(loaded.run.recovered === undefined ? {} : { recovered: loaded.run.recovered }),
    removedTemporaryFiles,
  };
}

/**
 * Refuses, before anything is written, a `charts/` that is a symbolic link: the charts would be written wherever it
 * points (anywhere the user can write, through a link someone else may have planted in a shared results directory).
 * servelab writes a run's files into the run directory itself; the user decides what to do with the link.
 */
async function refuseLinkedChartsDirectory(directory: string): Promise<void> {
  const path = join(directory, CHARTS_DIRECTORY);
  const stats = await lstat(path).catch(() => undefined);
  if (stats?.isSymbolicLink() !== true) return;
  const target = await readlink(path).catch(() => 'somewhere else');
  throw new ServelabError(
    'INVALID_RUN_DIRECTORY',
    `${path} is a symbolic link (to ${target}): servelab report writes charts into the run directory itself, never through a link; remove the link and run it again`,
  );
}
