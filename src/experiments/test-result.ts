import type { RunData, RunStatus } from '../types/run.js';
import type { Summary } from '../types/summary.js';
import { successRate, withFirstUsersNames, type ResultMetrics } from './first-users-names.js';

/** What `NodeTest.run()` and `RoutingTest.run()` return. */
export interface TestResult {
  runId: string;
  status: RunStatus;
  outputDirectory: string;
  /**
   * The per-experiment metrics (docs/metrics.md; summary.json writes them with format 2's names, docs/metrics.md), plus the
   * first users' names for them (`request_throughput`, `p99_ttft`, ... in milliseconds; see first-users-names.ts).
   */
  metrics: ResultMetrics;
  /** Succeeded requests / all requests, 0 to 1 (the first users' name). */
  success_rate: number;
  /** Paths of the files written, by kind. */
  exportedFiles: ExportedFiles;
  /** The same object as `exportedFiles`, under the first users' name. */
  exported_files: ExportedFiles;
  /** Everything measured, for further analysis in code. */
  run: RunData;
}

export interface ExportedFiles {
  directory: string;
  csv?: string;
  /** requests.parquet: the requests.csv table with typed columns, for pandas.read_parquet. */
  parquet?: string;
  jsonl?: string;
  json?: string;
  config?: string;
  html?: string;
  all: string[];
}

export function toTestResult(run: RunData, summary: Summary, outputDirectory: string, files: string[]): TestResult {
  const find = (name: string): string | undefined => files.find((path) => path.endsWith(`/${name}`));
  const exportedFiles: ExportedFiles = {
    directory: outputDirectory,
    csv: find('requests.csv'),
    parquet: find('requests.parquet'),
    jsonl: find('requests.jsonl'),
    json: find('summary.json'),
    config: find('config.json'),
    html: find('report.html'),
    all: files,
  };
  return {
    runId: run.info.runId,
    status: run.info.status,
    outputDirectory,
    metrics: withFirstUsersNames(summary),
    success_rate: successRate(summary),
    exportedFiles,
    exported_files: exportedFiles,
    run,
  };
}
