import type { RunData, RunStatus } from '../types/run.js';
import type { Summary } from '../types/summary.js';

/** What `NodeTest.run()` and `RoutingTest.run()` return. */
export interface TestResult {
  runId: string;
  status: RunStatus;
  outputDirectory: string;
  /** The per-experiment metrics (SPEC §3), also written to `summary.json`. */
  metrics: Summary;
  /** Paths of the files written, by kind. */
  exportedFiles: ExportedFiles;
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
  return {
    runId: run.info.runId,
    status: run.info.status,
    outputDirectory,
    metrics: summary,
    exportedFiles: {
      directory: outputDirectory,
      csv: find('requests.csv'),
      parquet: find('requests.parquet'),
      jsonl: find('requests.jsonl'),
      json: find('summary.json'),
      config: find('config.json'),
      html: find('report.html'),
      all: files,
    },
    run,
  };
}
