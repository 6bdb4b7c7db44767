import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ServelabError } from '../errors/servelab-error.js';
import type { Reporter } from '../types/reporter.js';
import { chartsReporter } from './charts/charts-reporter.js';
import { configReporter } from './config/config-reporter.js';
import { csvReporter } from './csv/csv-reporter.js';
import { htmlReporter } from './html/html-reporter.js';
import { jsonlReporter } from './jsonl/jsonl-reporter.js';
import { nodesReporter } from './nodes/nodes-reporter.js';
import { parquetReporter } from './parquet/parquet-reporter.js';
import { summaryReporter } from './summary/summary-reporter.js';
import { timeSeriesReporter } from './timeseries/timeseries-reporter.js';

/** Built-in reporters by name. */
export const reporterRegistry: Readonly<Record<string, Reporter>> = {
  csv: csvReporter,
  parquet: parquetReporter,
  jsonl: jsonlReporter,
  summary: summaryReporter,
  config: configReporter,
  timeseries: timeSeriesReporter,
  nodes: nodesReporter,
  html: htmlReporter,
  charts: chartsReporter,
};

/** Reporters a run writes when none are named. */
export const DEFAULT_REPORTER_NAMES: readonly string[] = ['config', 'csv', 'parquet', 'jsonl', 'timeseries', 'nodes', 'summary', 'html', 'charts'];

/** The data files only (no rendering): for tests and for very large runs where charts are not wanted. */
export const DATA_REPORTER_NAMES: readonly string[] = ['config', 'csv', 'jsonl', 'timeseries', 'nodes', 'summary'];

function isReporter(value: unknown): value is Reporter {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Reporter).name === 'string' &&
    typeof (value as Reporter).write === 'function'
  );
}

/**
 * A reporter by name: a built-in one, or else a module (a path relative to the working directory, an absolute path, or
 * a package name) whose default export or `reporter` export is a Reporter.
 */
export async function resolveReporter(name: string): Promise<Reporter> {
  const builtin = reporterRegistry[name];
  if (builtin) return builtin;
  const looksLikePath = name.startsWith('.') || isAbsolute(name) || /\.[cm]?[jt]s$/.test(name);
  const specifier = looksLikePath || existsSync(resolve(name)) ? pathToFileURL(resolve(name)).href : name;
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(specifier)) as Record<string, unknown>;
  } catch (error) {
    throw new ServelabError(
      'MODULE_LOAD_FAILED',
      `Reporter "${name}" is not built in (${Object.keys(reporterRegistry).join(', ')}) and could not be loaded as a module: ${
        (error as Error).message
      }. Give a built-in name or a path to a module that exports a reporter.`,
      { cause: error },
    );
  }
  const candidate = loaded.default ?? loaded.reporter;
  if (!isReporter(candidate)) {
    throw new ServelabError(
      'MODULE_LOAD_FAILED',
      `Module "${name}" loaded, but neither its default export nor its "reporter" export is a reporter ({ name: string, write(context) }).`,
    );
  }
  return candidate;
}
