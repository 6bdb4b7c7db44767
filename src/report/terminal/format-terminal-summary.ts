import { pdTextSections } from '../pd-text.js';
import { terminalSafe } from '../../utils/terminal-text.js';
import type { TapOverhead } from '../../types/routing.js';
import type { RunData } from '../../types/run.js';
import type { Summary } from '../../types/summary.js';
import { arrivalRatesText } from '../rate-text.js';
import { eventRecoveryText, eventStallText, recoveryText } from '../recovery-text.js';
import { unmodelledColumns } from '../unmodelled-stages.js';
import { shownStages } from '../shown-stages.js';
import { terminalLatencyRows } from '../latency-stages.js';
import { nodesInIndexOrder } from '../nodes/node-order.js';
import { clockWarnings } from '../clock-warnings.js';
import { intervalMsText, p99BasisText, PRECISION_METRICS } from '../precision/precision-text.js';
import { verdictDetailText, verdictLabel } from '../verdict-text.js';
import { twinSensitivityLines, twinSensitivityOf, twinSensitivityWarning } from '../twin-sensitivity-text.js';
import { harnessBoundText, harnessGradeText, harnessLabel, harnessNotCheckedText, harnessWarningText, harnessWatchedText } from '../harness-text.js';

export interface TerminalSummaryOptions {
  /** ANSI colors (for a TTY). Default false. */
  color?: boolean;
  /** Printed last, so the user knows where the files are. */
  outputDirectory?: string;
}

const WIDTH = 64;
const LABEL_WIDTH = 34;

/** Characters of an error message the terminal prints (the summary keeps 200; report.html shows them all). */
const TERMINAL_MESSAGE_CHARACTERS = 100;

/** A message on one line (line breaks and runs of spaces collapsed), cut with an ellipsis past `limit` characters. */
function oneLine(text: string, limit: number): string {
  const flat = terminalSafe(text.replace(/\s+/g, ' ')).trim();
  return flat.length > limit ? `${flat.slice(0, limit - 1)}…` : flat;
}

function fixed(value: number | null | undefined, digits = 2): string {
  return value === null || value === undefined || !Number.isFinite(value) ? '-' : value.toFixed(digits);
}

function milliseconds(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '-';
  const ms = value * 1000;
  const text = Math.abs(ms) >= 100 ? ms.toFixed(1) : Math.abs(ms) >= 1 ? ms.toFixed(2) : ms.toFixed(3);
  // Server timestamps a microsecond apart can give -0.0001 ms: print zero, not "-0.000".
  return /^-0\.0*$/.test(text) ? text.slice(1) : text;
}

/**
 * The end-of-run table, in the spirit of bench_serving's: the verdict on the load first, then status, counts, rates and token throughput, the latency
 * breakdown (mean / p50 / p99 in milliseconds), the offered load against its target, goodput, and the one check that
 * can fail: Little's law over the steady window, per stage.
 */
export function formatTerminalSummary(run: RunData, summary: Summary, options: TerminalSummaryOptions = {}): string {
  const paint = (code: string, text: string): string => (options.color ? `\u001b[${code}m${text}\u001b[0m` : text);
  const lines: string[] = [];
  const heading = (title: string, fill: string): void => {
    const padded = ` ${title} `;
    const left = Math.max(0, Math.floor((WIDTH - padded.length) / 2));
    lines.push(paint('1', `${fill.repeat(left)}${padded}${fill.repeat(Math.max(0, WIDTH - left - padded.length))}`));
  };
  const row = (label: string, value: string): void => {
    lines.push(`${`${label}:`.padEnd(LABEL_WIDTH)} ${value}`);
  };

  const { info } = run;
  heading(`servelab ${info.testLevel} test: ${info.runId}`, '=');
  // The verdict first: a run that completed but whose load outran the server must not read as a green "completed".
  // `undefined`: a summary.json written before servelab judged its load.
  const verdict = summary.verdict as Summary['verdict'] | undefined;
  if (verdict !== undefined) {
    const verdictColor = verdict.state === 'stable' ? '32' : verdict.state === 'saturated' ? '31' : '33';
    row('Verdict', paint(`1;${verdictColor}`, verdictLabel(verdict)));
    lines.push(`  ${verdict.reason}`);
    const detail = verdictDetailText(verdict, (value) => fixed(value));
    if (detail !== '') lines.push(`  (${detail})`);
  }
  // Beside the verdict: whether servelab's own processes or the host could have shaped the numbers.
  const harness = summary.harness;
  if (harness !== undefined) {
    const harnessColor = harness.state === 'clean' ? '32' : harness.state === 'affected' ? '33' : '1;33';
    row('Harness', `${paint(harnessColor, harnessLabel(harness))}: ${terminalSafe(harnessGradeText(harness))} (${harnessWatchedText(harness)})`);
    // The processes over a raw threshold are the causes to look at; on a clean run they moved nothing that matters.
    if (harness.state !== 'clean') for (const warning of harness.warnings) lines.push(paint('33', `  ${terminalSafe(harnessWarningText(warning))}`));
    const notChecked = harnessNotCheckedText(harness);
    if (notChecked !== '') lines.push(`  not checked (no self-report yet): ${terminalSafe(notChecked)}`);
  }
  const statusColor = info.status === 'completed' ? '32' : info.status === 'interrupted' ? '33' : '31';
  row('Status', paint(statusColor, info.status) + (info.simulated ? ' (virtual time)' : ''));
  row('Target', info.target);
  const failedClasses = Object.entries(summary.counts.failedByClass)
    .sort((a, b) => b[1] - a[1])
    // harness_limit is servelab's own limit (descriptors, memory, its body budget), never the server's: said here too.
    .map(([errorClass, count]) => (errorClass === 'harness_limit' ? `${errorClass} ${count}: servelab's own limit, not the server` : `${errorClass} ${count}`))
    .join(', ');
  const failed = summary.counts.failed > 0 ? paint('31', String(summary.counts.failed)) : '0';
  row('Requests ok / failed', `${summary.counts.succeeded} / ${failed}${failedClasses ? ` (${failedClasses})` : ''}`);
  row('Duration (s)', fixed(summary.durationSeconds));

  const load = summary.offeredLoad;
  row('Arrival rate target / scheduled / achieved', arrivalRatesText(load, (value) => fixed(value)));
  row('Inter-arrival CV', fixed(load.interArrivalCv, 3));
  const held = load.heldForConcurrency;
  if (held !== undefined && held.count > 0) {
    const hold = held.holdSeconds ? `, hold mean / p99 ${milliseconds(held.holdSeconds.mean)} / ${milliseconds(held.holdSeconds.p99)} ms` : '';
    row('Held for max concurrency', `${held.count} req (${fixed(held.share * 100, 1)}%)${hold}`);
  }
  row('Send lag p50 / p99 / max (ms)', load.sendLag ? [load.sendLag.p50, load.sendLag.p99, load.sendLag.max].map(milliseconds).join(' / ') : '-');
  row('Request throughput (req/s)', fixed(summary.throughput.requestsPerSecond));
  row('Input token throughput (tok/s)', fixed(summary.throughput.inputTokensPerSecond));
  row('Output token throughput (tok/s)', fixed(summary.throughput.outputTokensPerSecond));
  row('Total token throughput (tok/s)', fixed(summary.throughput.totalTokensPerSecond));
  row('Concurrency (sum E2E / duration)', fixed(summary.concurrency.benchServing));
  const inSystem = summary.concurrency.stages?.in_system;
  if (inSystem) row('In system: peak / mean', `${inSystem.peak} / ${fixed(inSystem.timeWeightedMean)}`);
  const stages = shownStages({ info }, summary);
  const steady = stages[0]?.[1].littlesLaw;
  if (steady !== undefined) {
    const window =
      steady.windowStart === null || steady.windowEnd === null
        ? 'no steady window'
        : `steady window ${fixed(steady.windowStart - info.startTime)}-${fixed(steady.windowEnd - info.startTime)} s`;
    const verdicts = stages.map(([stage, values]) => {
      const check = values.littlesLaw;
      if (check.verdict === 'not_checked') return `${stage} not checked`;
      const text = `${stage} ${check.verdict} (${fixed((check.relativeError ?? 0) * 100, 1)}%)`;
      return check.verdict === 'fail' ? paint('31', text) : text;
    });
    row(`Little's law check (${window}, tol ${fixed(steady.tolerance * 100, 0)}%)`, verdicts.join(', '));
    const reason = stages.find(([, values]) => values.littlesLaw.reason !== null)?.[1].littlesLaw.reason;
    if (reason !== undefined && reason !== null && stages.every(([, values]) => values.littlesLaw.verdict === 'not_checked')) lines.push(`  (not checked: ${reason})`);
  }
  if (summary.goodput) {
    const objectives = Object.entries(summary.goodput.slo)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => `${name.replace(/Ms$/, '')} <= ${value} ms`)
      .join(', ');
    row('Goodput (req/s)', `${fixed(summary.goodput.requestsPerSecond)} (${fixed(summary.goodput.fraction * 100, 1)}% meet ${objectives})`);
  }

  heading('Latency (ms)', '-');
  const unmodelled: ReadonlySet<string> = unmodelledColumns(run);
  lines.push(`${''.padEnd(LABEL_WIDTH)} ${'mean'.padStart(9)} ${'p50'.padStart(9)} ${'p99'.padStart(9)}`);
  for (const { name: source, label, statistics } of terminalLatencyRows(summary)) {
    if (!statistics) continue;
    const flagged = summary.harness?.stages_flagged[source];
    const bound = summary.harness?.errorBounds?.[source];
    // A stage the engine does not model is 0 by construction: the label says so (the chart's words, shortened to fit).
    const shown = unmodelled.has(source) ? `${label} (not modelled by sim)` : label;
    lines.push(
      `${shown.padEnd(LABEL_WIDTH)} ${milliseconds(statistics.mean).padStart(9)} ${milliseconds(statistics.p50).padStart(9)} ${milliseconds(
        statistics.p99,
      ).padStart(9)}${flagged === undefined ? '' : paint('33', `  [harness ${bound === undefined ? '' : `${harnessBoundText(bound)} `}from ${terminalSafe(flagged.join(', '))}]`)}`,
    );
  }

  const precision = summary.precision;
  if (precision !== undefined && Object.keys(precision.metrics).length > 0) {
    // How far each headline percentile could move by chance: the run's requests are a sample of what the server does.
    heading(`Precision (ms, ${fixed(precision.confidence * 100, 0)}% bootstrap intervals over requests)`, '-');
    for (const [key, label] of PRECISION_METRICS) {
      const metric = precision.metrics[key];
      if (metric === undefined) continue;
      lines.push(
        `${label.padEnd(12)} p50 ${intervalMsText(metric.p50, milliseconds)}  p99 ${intervalMsText(metric.p99, milliseconds)}; ${p99BasisText(metric, key === 'itlSeconds' ? 'gaps' : 'requests')}`,
      );
    }
  }

  const errors = summary.errors ?? [];
  if (errors.length > 0) {
    heading('Errors (most common message)', '-');
    for (const error of errors) {
      const message = error.topMessage === null ? 'no message' : `${oneLine(error.topMessage, TERMINAL_MESSAGE_CHARACTERS)} (${error.topMessageCount})`;
      row(`${error.class} ${error.count}`, paint('31', message));
    }
  }

  if (summary.routing) {
    heading('Nodes', '-');
    for (const node of nodesInIndexOrder(summary.routing.nodes)) {
      const flagged = summary.harness?.nodes_flagged[node.host];
      const flag = flagged === undefined ? '' : paint('33', ` [harness: ${terminalSafe(flagged.join(', '))}]`);
      row(`${node.node === null ? '' : `node ${node.node} `}${terminalSafe(node.host)}${node.placedOn === undefined ? '' : ` (${terminalSafe(node.placedOn)})`}`, `${node.requests} req (${fixed(node.share * 100, 1)}%), ttft p50 ${milliseconds(node.ttft?.p50)} ms${flag}`);
    }
    row('Imbalance max/mean, CV', `${fixed(summary.routing.imbalanceMaxOverMean, 3)}, ${fixed(summary.routing.imbalanceCv, 3)}`);
  }
  if (summary.pd !== undefined) {
    for (const section of pdTextSections(summary.pd)) {
      // The time series stays in report.html and summary.json: twenty rows would bury the terminal's summary.
      if (section.title === 'KV transfers over time') continue;
      heading(section.title, '-');
      lines.push(`  ${section.note}`);
      lines.push(`  ${section.header.join(' | ')}`);
      for (const cells of section.rows) lines.push(`  ${cells.map((cell) => terminalSafe(cell)).join(' | ')}`);
    }
  }
  const tapOverhead = tapOverheadOf(run);
  if (tapOverhead !== undefined) {
    row('Tap overhead p50 / p99 (ms)', `in ${fixed(tapOverhead.inboundMs.p50Ms, 3)} / ${fixed(tapOverhead.inboundMs.p99Ms, 3)}, relay ${fixed(tapOverhead.relayMs.p50Ms, 3)} / ${fixed(tapOverhead.relayMs.p99Ms, 3)}`);
  }
  if (summary.events && summary.events.length > 0) {
    heading('Events', '-');
    for (const impact of summary.events) {
      const label = `${impact.kind}${impact.node === undefined ? '' : ` ${impact.role === undefined ? '' : `${impact.role} `}node ${impact.node}`} at ${fixed(impact.time - info.startTime)} s${impact.attribution === 'cluster' && impact.node !== undefined ? ' (all nodes)' : ''}`;
      const errors = impact.failuresUntilNextEvent === 0 ? 'no failures' : `${impact.failuresUntilNextEvent} failed over ${fixed(impact.errorsStoppedAfterSeconds)} s`;
      const parts = [
        errors,
        `completed/s ${fixed(impact.before.completionsPerSecond)} -> ${fixed(impact.after.completionsPerSecond)}`,
        // A hang fails nothing but can multiply TTFT: the line says so, not only "no failures".
        `TTFT p50 ${milliseconds(impact.before.ttftP50)} -> ${milliseconds(impact.after.ttftP50)} ms`,
        eventStallText(impact, (seconds) => fixed(seconds)),
        eventRecoveryText(impact, (seconds) => fixed(seconds)),
      ];
      row(label, parts.filter((part) => part !== undefined).join('; '));
    }
  }
  const quality = summary.dataQuality;
  const cautions = quality?.cautions ?? [];
  if (quality !== undefined && (quality.recordsAffected > 0 || cautions.length > 0)) {
    heading('Data quality', '-');
    if (quality.recordsAffected > 0) {
      row('Records with fields left empty', String(quality.recordsAffected));
      for (const [entry, count] of Object.entries(quality.removedFields)) row(`  ${terminalSafe(entry)}`, String(count));
      lines.push(`  (${quality.rule})`);
    }
    for (const caution of cautions) lines.push(paint('33', `Caution: ${terminalSafe(caution)}`));
  }
  const recoveryRule = summary.events?.find((impact) => impact.recoveryRule !== undefined)?.recoveryRule;
  if (recoveryRule !== undefined) lines.push(`  (${recoveryRule})`);
  const sensitivity = twinSensitivityOf(run.extras);
  if (sensitivity !== undefined) {
    for (const line of twinSensitivityLines(sensitivity)) lines.push(terminalSafe(line));
    const warning = twinSensitivityWarning(sensitivity);
    if (warning !== null) lines.push(paint('33', `Warning: ${terminalSafe(warning)}`));
  }
  const notices = run.extras?.['notices'];
  if (Array.isArray(notices)) for (const notice of notices) lines.push(`Note: ${terminalSafe(String(notice))}`);
  for (const notice of run.notices ?? []) {
    const when = notice.time === undefined ? '' : ` at ${fixed(notice.time - info.startTime)} s`;
    lines.push(paint('33', `Notice (${terminalSafe(notice.source)}${when}): ${terminalSafe(notice.message)}`));
  }
  if (run.recovered !== undefined) lines.push(paint('33', `Recovered: ${recoveryText(run.recovered)}`));
  for (const warning of clockWarnings(summary)) lines.push(paint('33', `Clock: ${terminalSafe(warning)}`));
  lines.push('='.repeat(WIDTH));
  if (options.outputDirectory !== undefined) row('Output directory', options.outputDirectory);
  return `${lines.join('\n')}\n`;
}

/** The tracing taps' own measured cost, when the run had taps (`run.extras.taps.overhead`). */
function tapOverheadOf(run: RunData): TapOverhead | undefined {
  const taps = run.extras?.['taps'] as { overhead?: TapOverhead } | undefined;
  return taps?.overhead;
}

