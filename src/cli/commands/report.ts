import type { Command } from 'commander';
import type { SloTargets } from '../../types/summary.js';
import { parseSlo } from '../options/option-table.js';

interface ReportCommandOptions {
  reporters?: string;
  slo?: SloTargets;
  quiet?: boolean;
}

/** `servelab report DIR`: regenerate every file of a run directory (CSV, JSON, time series, HTML, charts) from its data. */
export function registerReportCommand(program: Command): void {
  program
    .command('report')
    .summary('regenerate the files of a run directory (tables, summary, report.html, charts) from its data')
    .argument('<dir>', 'a run directory (results/<run-id>/ or the --output-dir of a run)')
    .option('--reporters <names>', 'comma-separated reporters to run: built-in names or module paths (default: all built-in)')
    .option('--slo <objectives>', 'goodput objectives in ms, e.g. ttft=200,tpot=50,total=10000 (default: the run’s own)', parseSlo)
    .option('--quiet', 'print only the paths written')
    .action(async (directory: string, options: ReportCommandOptions) => {
      const [{ regenerateReport }, { formatTerminalSummary }, { recoveryText }, { isServelabError }] = await Promise.all([
        import('../../report/regenerate.js'),
        import('../../report/terminal/format-terminal-summary.js'),
        import('../../report/recovery-text.js'),
        import('../../errors/servelab-error.js'),
      ]);
      const slo = options.slo;
      const reporterNames = options.reporters?.split(',').map((name) => name.trim()).filter((name) => name !== '');
      const { run, summary, written, failures, recovered, removedTemporaryFiles } = await regenerateReport(directory, {
        ...(slo === undefined ? {} : { slo }),
        ...(reporterNames === undefined ? {} : { reporterNames }),
      });
      if (!options.quiet) process.stdout.write(formatTerminalSummary(run, summary, { color: process.stdout.isTTY === true, outputDirectory: directory }));
      if (removedTemporaryFiles.length > 0) process.stdout.write(`removed ${removedTemporaryFiles.length} temporary file(s) a killed writer left: ${removedTemporaryFiles.join(', ')}\n`);
      if (recovered !== undefined) process.stdout.write(`recovered: ${recoveryText(recovered)}\n`);
      process.stdout.write(`${written.map((path) => `wrote ${path}`).join('\n')}\n`);
      // A full disk is the one failure that is not a notice: the files it could not hold are not there.
      const diskFull = failures.find((failure) => isServelabError(failure.error) && failure.error.code === 'DISK_FULL');
      if (diskFull !== undefined) throw diskFull.error;
    });
}
