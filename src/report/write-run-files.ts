import type { Reporter } from '../types/reporter.js';
import type { RunData } from '../types/run.js';
import type { Summary } from '../types/summary.js';
import { DEFAULT_REPORTER_NAMES, resolveReporter } from './registry.js';

export interface ReporterFailure {
  reporter: string;
  error: unknown;
}

export interface WrittenRunFiles {
  /** Every path written. */
  written: string[];
  /** Reporters that failed; each is also a notice on the run (`reporter:<name>`). */
  failures: ReporterFailure[];
}

/**
 * Writes the run directory: each named reporter in turn (built-in names or module paths), each file atomically; a
 * concurrent reporter (parquet) is started first and finishes beside the others.
 * Resolves every name before writing anything, so a typo fails fast instead of leaving half a directory. A reporter
 * that fails does not stop the others: it becomes a notice on the run (in summary.json, which is written again at the
 * end when a notice came after it) and a failure in the result.
 */
export async function writeRunFiles(
  run: RunData,
  summary: Summary | (() => Summary),
  outputDirectory: string,
  reporterNames: readonly string[] = DEFAULT_REPORTER_NAMES,
): Promise<string[]> {
  return (await writeRunFilesReportingFailures(run, summary, outputDirectory, reporterNames)).written;
}

/**
 * `writeRunFiles`, telling also which reporters failed (and how). The summary may be given as the function that works
 * it out: it is then worked out when a reporter first reads it, so that a concurrent reporter that does not (parquet)
 * starts before it.
 */
export async function writeRunFilesReportingFailures(
  run: RunData,
  summary: Summary | (() => Summary),
  outputDirectory: string,
  reporterNames: readonly string[] = DEFAULT_REPORTER_NAMES,
): Promise<WrittenRunFiles> {
  const reporters: Reporter[] = [];
  for (const name of reporterNames) reporters.push(await resolveReporter(name));
  const written: string[] = [];
  const failures: ReporterFailure[] = [];
  // One context for all: reporters may cache work on it (the HTML and chart reporters share their rendered SVGs).
  let workedOut = typeof summary === 'function' ? undefined : summary;
  const context = {
    run,
    get summary(): Summary {
      workedOut ??= (summary as () => Summary)();
      return workedOut;
    },
    outputDirectory,
  };
  const noticeCount = (): number => run.notices?.length ?? 0;
  let summaryReporter: Reporter | undefined;
  let noticesInSummary = 0;
  const write = async (reporter: Reporter): Promise<string[]> => {
    try {
      const paths = await reporter.write(context);
      if (reporter.name === 'summary') {
        summaryReporter = reporter;
        noticesInSummary = noticeCount();
      }
      return paths;
    } catch (error) {
      failures.push({ reporter: reporter.name, error });
      run.notices = [...(run.notices ?? []), { source: `reporter:${reporter.name}`, message: `the ${reporter.name} reporter failed: ${error instanceof Error ? error.message : String(error)}` }];
      return [];
    }
  };
  // Concurrent reporters start first, so that their work off the main thread overlaps the others'; the paths keep the
  // reporters' order.
  const pathsByReporter = new Array<Promise<string[]> | string[]>(reporters.length);
  reporters.forEach((reporter, index) => {
    if (reporter.concurrent === true) pathsByReporter[index] = write(reporter);
  });
  for (const [index, reporter] of reporters.entries()) if (reporter.concurrent !== true) pathsByReporter[index] = await write(reporter);
  for (const paths of pathsByReporter) written.push(...(await paths as string[]));
  if (summaryReporter !== undefined && noticeCount() > noticesInSummary) await write(summaryReporter);
  return { written: [...new Set(written)], failures };
}
