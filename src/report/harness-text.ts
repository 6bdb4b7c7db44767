import type { HarnessErrorBound, HarnessReport, HarnessWarning } from '../types/harness.js';

/** The harness grade as the reports print it beside the verdict: CLEAN, AFFECTED or SUSPECT. */
export function harnessLabel(report: HarnessReport): string {
  return report.state.toUpperCase();
}

/** What was watched, in a few words: "client, host CPU". */
export function harnessWatchedText(report: HarnessReport): string {
  const watched = report.processes.map((process) => process.name);
  if (report.host_cpu !== null) watched.push('host CPU');
  return watched.length === 0 ? 'nothing watched' : `watched: ${watched.join(', ')}`;
}

function percent(share: number): string {
  const value = share * 100;
  // Past 1000% the figure says only that the metric is far below the harness's resolution.
  if (value > 1000) return '>1000';
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

/** One metric's bound: "±0.125 ms at p50, ±15.56 ms at p99 (34.0%)": the share is the larger of the two against the metric's p50 and p99. */
export function harnessBoundText(bound: HarnessErrorBound): string {
  // A summary.json written with only the p99 bound reads as that.
  const p50 = bound.p50BoundMs === undefined ? '' : `±${compactMs(bound.p50BoundMs)} ms at p50, `;
  return `${p50}±${compactMs(bound.boundMs)} ms at p99${bound.share === null ? '' : ` (${percent(bound.share)}%)`}`;
}

/**
 * The grade in one sentence: clean says the bound stays within the share everywhere; affected and suspect name the
 * metrics it exceeds that share of, each with the share (the bounds stand beside each metric).
 */
export function harnessGradeText(report: HarnessReport): string {
  // A summary.json written before the bounds existed has neither field.
  if (report.errorBounds === undefined) return report.state === 'clean' ? 'nothing over a threshold' : 'processes over a threshold (below)';
  const share = `${Number(((report.thresholds.metric_error_share ?? 0.05) * 100).toFixed(2))}%`;
  if (report.state === 'clean') return `error bound within ${share} of every metric it affects`;
  const named = (report.affected ?? []).map((stage) => {
    const bound = report.errorBounds[stage];
    return bound?.share === null || bound?.share === undefined ? stage : `${stage} (${percent(bound.share)}%)`;
  });
  const headline = report.state === 'suspect' ? 'TTFT or E2E among them' : 'not TTFT or E2E';
  return `error bound over ${share} of ${named.join(', ')}; ${headline}`;
}

function compactMs(value: number): string {
  return value < 1 ? value.toFixed(3) : value.toFixed(2);
}

/** One warning as a line: the process, the problem, and the columns it can have moved. */
export function harnessWarningText(warning: HarnessWarning): string {
  return `${warning.process}${warning.node === undefined ? '' : ` (${warning.node})`}: ${warning.problem}; affects ${warning.stages.join(', ')}`;
}

/** servelab's processes that did not report on themselves, by name ("router, node-0"); empty when none. */
export function harnessNotCheckedText(report: HarnessReport): string {
  return report.missing.map((line) => line.split(':', 1)[0] ?? line).join(', ');
}
