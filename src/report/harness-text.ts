import type { HarnessReport, HarnessWarning } from '../types/harness.js';

/** The harness state as the reports print it beside the verdict: CLEAN or SUSPECT. */
export function harnessLabel(report: HarnessReport): string {
  return report.state.toUpperCase();
}

/** What was watched, in a few words: "client, host CPU". */
export function harnessWatchedText(report: HarnessReport): string {
  const watched = report.processes.map((process) => process.name);
  if (report.host_cpu !== null) watched.push('host CPU');
  return watched.length === 0 ? 'nothing watched' : `watched: ${watched.join(', ')}`;
}

/** One warning as a line: the process, the problem, and the columns it can have inflated. */
export function harnessWarningText(warning: HarnessWarning): string {
  return `${warning.process}${warning.node === undefined ? '' : ` (${warning.node})`}: ${warning.problem}; affects ${warning.stages.join(', ')}`;
}

/** servelab's processes that did not report on themselves, by name ("router, node-0"); empty when none. */
export function harnessNotCheckedText(report: HarnessReport): string {
  return report.missing.map((line) => line.split(':', 1)[0] ?? line).join(', ');
}
