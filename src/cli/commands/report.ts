import type { Command } from 'commander';
import { ServelabError } from '../../errors/servelab-error.js';
import type { SloTargets } from '../../types/summary.js';

interface ReportCommandOptions {
  reporters?: string;
  sloTtftMs?: string;
  sloTpotMs?: string;
  sloTotalMs?: string;
  quiet?: boolean;
}

/** Parses a positive number of milliseconds given on the command line. */
export function parseMilliseconds(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) {
    throw new ServelabError('INVALID_CONFIG', `${flag} must be a positive number of milliseconds, got "${value}".`);
  }
  return parsed;
}

/** Goodput objectives from --slo-ttft-ms / --slo-tpot-ms / --slo-total-ms; undefined when none is given. */
export function sloFromOptions(options: { sloTtftMs?: string; sloTpotMs?: string; sloTotalMs?: string }): SloTargets | undefined {
  const slo: SloTargets = {};
  const ttftMs = parseMilliseconds('--slo-ttft-ms', options.sloTtftMs);
  const tpotMs = parseMilliseconds('--slo-tpot-ms', options.sloTpotMs);
  const totalMs = parseMilliseconds('--slo-total-ms', options.sloTotalMs);
  if (ttftMs !== undefined) slo.ttftMs = ttftMs;
  if (tpotMs !== undefined) slo.tpotMs = tpotMs;
  if (totalMs !== undefined) slo.totalMs = totalMs;
  return Object.keys(slo).length === 0 ? undefined : slo;
}

/** `servelab report DIR`: regenerate every file of a run directory (CSV, JSON, time series, HTML, charts) from its data. */
export function registerReportCommand(program: Command): void {
  program
    .command('report')
    .summary('regenerate the files of a run directory (tables, summary, report.html, charts) from its data')
    .argument('<dir>', 'a run directory (results/<run-id>/ or the --output-dir of a run)')
    .option('--reporters <names>', 'comma-separated reporters to run: built-in names or module paths (default: all built-in)')
    .option('--slo-ttft-ms <ms>', 'goodput objective on TTFT (default: the run’s own)')
    .option('--slo-tpot-ms <ms>', 'goodput objective on TPOT')
    .option('--slo-total-ms <ms>', 'goodput objective on end-to-end latency')
    .option('--quiet', 'print only the paths written')
    .action(async (directory: string, options: ReportCommandOptions) => {
      const [{ regenerateReport }, { formatTerminalSummary }] = await Promise.all([
        import('../../report/regenerate.js'),
        import('../../report/terminal/format-terminal-summary.js'),
      ]);
      const slo = sloFromOptions(options);
      const reporterNames = options.reporters?.split(',').map((name) => name.trim()).filter((name) => name !== '');
      const { run, summary, written } = await regenerateReport(directory, {
        ...(slo === undefined ? {} : { slo }),
        ...(reporterNames === undefined ? {} : { reporterNames }),
      });
      if (!options.quiet) process.stdout.write(formatTerminalSummary(run, summary, { color: process.stdout.isTTY === true, outputDirectory: directory }));
      process.stdout.write(`${written.map((path) => `wrote ${path}`).join('\n')}\n`);
    });
}
