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
  // servelab's own failed requests come first: they are what makes such a run suspect, whatever the bounds say.
  const failures = report.harnessLimitFailures ?? 0;
  if (failures > 0) {
    const own = `servelab itself failed ${failures} request${failures === 1 ? '' : 's'} (harness_limit: its own file descriptors or memory, not the server)`;
    const bounds = timingGradeText(report);
    return report.errorBounds === undefined ? own : `${own}; ${bounds}`;
  }
  return timingGradeText(report);
}

/** The grade of the timing alone: the error bounds against the metrics. */
function timingGradeText(report: HarnessReport): string {
  // A summary.json written before the bounds existed has neither field.
  if (report.errorBounds === undefined) return report.state === 'clean' ? 'nothing over a threshold' : 'processes over a threshold (below)';
  const share = `${Number(((report.thresholds.metric_error_share ?? 0.05) * 100).toFixed(2))}%`;
  const affected = report.affected ?? [];
  // A run suspect only for servelab's own failed requests has timing within the share everywhere.
  if (report.state === 'clean' || affected.length === 0) return `error bound within ${share} of every metric it affects`;
  const named = affected.map((stage) => {
    const bound = report.errorBounds[stage];
    return bound?.share === null || bound?.share === undefined ? stage : `${stage} (${percent(bound.share)}%)`;
  });
  const headline = affected.includes('ttft') || affected.includes('total_latency') ? 'TTFT or E2E among them' : 'not TTFT or E2E';
  return `error bound over ${share} of ${named.join(', ')}; ${headline}`;
}

function compactMs(value: number): string {
  return value < 1 ? value.toFixed(3) : value.toFixed(2);
}

/** One warning as a line: the process, the problem, and the columns it can have moved. */
export function harnessWarningText(warning: HarnessWarning): string {
  // A cause that moved no timing (servelab's own failed requests) names no columns.
  const affects = warning.stages.length === 0 ? '' : `; affects ${warning.stages.join(', ')}`;
  return `${warning.process}${warning.node === undefined ? '' : ` (${warning.node})`}: ${warning.problem}${affects}`;
}

/** servelab's processes that did not report on themselves, by name ("router, node-0"); empty when none. */
export function harnessNotCheckedText(report: HarnessReport): string {
  return report.missing.map((line) => line.split(':', 1)[0] ?? line).join(', ');
}
