import type { Reporter } from '../types/reporter.js';
import type { RunData } from '../types/run.js';
import type { Summary } from '../types/summary.js';
import { DEFAULT_REPORTER_NAMES, resolveReporter } from './registry.js';

/**
 * Writes the run directory: each named reporter in turn (built-in names or module paths), each file atomically.
 * Resolves every name before writing anything, so a typo fails fast instead of leaving half a directory.
 * Returns every path written.
 */
export async function writeRunFiles(
  run: RunData,
  summary: Summary,
  outputDirectory: string,
  reporterNames: readonly string[] = DEFAULT_REPORTER_NAMES,
): Promise<string[]> {
  const reporters: Reporter[] = [];
  for (const name of reporterNames) reporters.push(await resolveReporter(name));
  const written: string[] = [];
  // One context for all: reporters may cache work on it (the HTML and chart reporters share their rendered SVGs).
  const context = { run, summary, outputDirectory };
  for (const reporter of reporters) written.push(...(await reporter.write(context)));
  return written;
}
