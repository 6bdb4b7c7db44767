import { pdTextSections } from '../pd-text.js';
import { join } from 'node:path';
import type { ReportContext, Reporter } from '../../types/reporter.js';
import type { DurationSummary } from '../../types/routing.js';
import type { RunData } from '../../types/run.js';
import type { IntervalEstimate, LittlesLawCheck, Summary } from '../../types/summary.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import { renderedCharts, type RenderedChart } from '../charts/rendered-charts.js';
import { arrivalRatesText } from '../rate-text.js';
import { eventRecoveryText, eventStallText, recoveryText } from '../recovery-text.js';
import { NOT_MODELLED, unmodelledColumns } from '../unmodelled-stages.js';
import { nodesInIndexOrder } from '../nodes/node-order.js';
import { shownStages } from '../shown-stages.js';
import { reportLatencyRows } from '../latency-stages.js';
import { clockWarnings } from '../clock-warnings.js';
import { verdictDetailText, verdictLabel } from '../verdict-text.js';
import { signedPercentText, twinSensitivityOf, twinSensitivityWarning } from '../twin-sensitivity-text.js';
import { stepErrorPercentText } from '../../orchestration/virtual-time/twin-sensitivity.js';
import { countText, PRECISION_METRICS } from '../precision/precision-text.js';
import { formatPValue } from '../../analysis/sent-process.js';
import { harnessBoundText, harnessGradeText, harnessLabel, harnessNotCheckedText, harnessWarningText, harnessWatchedText } from '../harness-text.js';

export const REPORT_HTML = 'report.html';

export function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;');
}

const number = (value: number | null | undefined, digits = 2): string => {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  const text = value.toFixed(digits);
  // A duration a fraction of a microsecond below zero (two server timestamps) reads as zero, not "-0.000".
  return /^-0(\.0*)?$/.test(text) ? text.slice(1) : text;
};
const ms = (seconds: number | null | undefined): string => (seconds === null || seconds === undefined ? '–' : number(seconds * 1000, 3));

function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const head = headers.map((header) => `<th>${escapeHtml(header)}</th>`).join('');
  const body = rows.map((row) => `<tr>${row.map((cell) => `<td>${escapeHtml(cell)}</td>`).join('')}</tr>`).join('\n');
  return `<table><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

function overview(run: RunData, summary: Summary): string {
  const failedClasses = Object.entries(summary.counts.failedByClass).map(([name, count]) => `${name} ${count}`).join(', ');
  const load = summary.offeredLoad;
  const rows: [string, string][] = [
    ['Requests succeeded / failed', `${summary.counts.succeeded} / ${summary.counts.failed}${failedClasses ? ` (${failedClasses})` : ''}`],
    ['Duration (first arrival to last finish)', `${number(summary.durationSeconds, 3)} s`],
    ['Request throughput', `${number(summary.throughput.requestsPerSecond)} req/s`],
    ['Input / output / total token throughput', `${number(summary.throughput.inputTokensPerSecond, 1)} / ${number(summary.throughput.outputTokensPerSecond, 1)} / ${number(summary.throughput.totalTokensPerSecond, 1)} tok/s`],
    ['Concurrency (sum of E2E / duration)', number(summary.concurrency.benchServing)],
    ['Arrival rate target / scheduled / achieved', arrivalRatesText(load, (value) => number(value))],
    ['Inter-arrival CV', number(load.interArrivalCv, 3)],
    ['Send lag p50 / p99 / max', load.sendLag ? `${ms(load.sendLag.p50)} / ${ms(load.sendLag.p99)} / ${ms(load.sendLag.max)} ms` : '–'],
  ];
  const held = load.heldForConcurrency;
  if (held !== undefined && held.count > 0) {
    const hold = held.holdSeconds ? `; hold (dispatch − scheduled) mean ${ms(held.holdSeconds.mean)} ms, p99 ${ms(held.holdSeconds.p99)} ms` : '';
    rows.push(['Held back by max concurrency', `${held.count} requests (${number(held.share * 100, 1)}%)${hold}`]);
  }
  if (summary.goodput) {
    const objectives = Object.entries(summary.goodput.slo).filter(([, value]) => value !== undefined).map(([name, value]) => `${name.replace(/Ms$/, '')} ≤ ${value} ms`).join(', ');
    rows.push(['Goodput', `${number(summary.goodput.requestsPerSecond)} req/s (${number(summary.goodput.fraction * 100, 1)}% of requests meet ${objectives})`]);
  }
  return table(['metric', 'value'], rows);
}

/**
 * The verdict on the load, first in the report: the state, its reason, and the evidence (docs/metrics.md, "Verdict").
 * Empty for a summary.json written before servelab judged its load.
 */
function verdictSection(summary: Summary): string {
  const verdict = summary.verdict as Summary['verdict'] | undefined;
  if (verdict === undefined) return '';
  const evidence = verdict.evidence;
  const detail = verdictDetailText(verdict, (value) => number(value, 3));
  const rows: [string, string][] =
    evidence === null
      ? []
      : [
          ['Judged window (s after t0)', `${number(evidence.window_start_s, 3)} to ${number(evidence.window_end_s, 3)}`],
          ['Offered / completed rate in the window', `${number(evidence.offered_rate_per_s)} / ${number(evidence.served_rate_per_s)} req/s (ratio ${number(evidence.served_to_offered_ratio, 3)})`],
          ['Requests in the system: window start → end (peak)', `${evidence.in_system_at_window_start} → ${evidence.in_system_at_window_end} (${evidence.in_system_peak})`],
          ['Trend of requests in the system', `${number(evidence.in_system_growth_per_s, 3)} /s (${number(evidence.in_system_growth_over_window, 1)} over the window)`],
          ['Drain after the last arrival', evidence.drain_after_last_arrival_s === null ? '–' : `${number(evidence.drain_after_last_arrival_s, 3)} s`],
          ['Sent requests never finished', String(evidence.unfinished_requests)],
        ];
  return `<section class="verdict verdict-${escapeHtml(verdict.state)}"><h2>Verdict: ${escapeHtml(verdictLabel(verdict))}</h2>
<p>${escapeHtml(verdict.reason)}${detail === '' ? '' : ` (${escapeHtml(detail)})`}.</p>
${rows.length === 0 ? '' : table(['evidence', 'value'], rows)}
<details class="meta"><summary>How the verdict is judged</summary><p>A run is judged SATURATED when the requests in the system (offered, not yet finished; a request held in the client counts from its scheduled instant) grew over the judged window by at least ${number(verdict.thresholds.min_growth_share * 100, 0)}% of the offered rate, and by at least ${verdict.thresholds.min_growth_requests} requests and ${number(verdict.thresholds.min_growth_of_start_level * 100, 0)}% of the level at the window’s start; otherwise STABLE. The first ${number(verdict.thresholds.fill_share * 100, 0)}% of the arrival span is left out: the system fills there even when it is stable.</p></details></section>`;
}

/**
 * Beside the verdict: whether servelab's own processes or the host could have shaped the numbers (docs/metrics.md,
 * "Harness"). Empty when the run did not watch itself (virtual time, an older summary.json).
 */
function harnessSection(summary: Summary): string {
  const harness = summary.harness;
  if (harness === undefined) return '';
  const thresholds = harness.thresholds;
  const rows = harness.processes.map((process) => [
    process.name,
    process.event_loop_delay_ms === null ? '–' : `${number(process.event_loop_delay_ms.p99, 3)} / ${number(process.event_loop_delay_ms.max, 1)}`,
    `${number(process.cpu_share_of_one_core * 100, 0)}%`,
    process.step_lateness_ms === undefined ? '–' : number(process.step_lateness_ms.p99, 3),
    process.send_lag_p99_ms === undefined ? '–' : number(process.send_lag_p99_ms, 3),
  ]);
  if (harness.host_cpu !== null) {
    rows.push([`host (${harness.host_cpu.cores} cores)`, '–', `${number(harness.host_cpu.busy_share_mean * 100, 0)}% busy (max ${number(harness.host_cpu.busy_share_max * 100, 0)}%)`, '–', '–']);
  }
  const warnings = harness.state === 'clean' ? '' : harness.warnings.map((warning) => `<p class="warning">${escapeHtml(harnessWarningText(warning))}</p>`).join('\n');
  const notChecked = harnessNotCheckedText(harness);
  return `<section class="harness harness-${escapeHtml(harness.state)}"><h2>Harness: ${escapeHtml(harnessLabel(harness))}</h2>
<p><strong>${escapeHtml(harnessGradeText(harness))}</strong>. The bound beside each metric in the Latencies table is how far servelab’s own processes can have moved it (their lateness, summed along its path); a metric is affected when the bound exceeds ${number((thresholds.metric_error_share ?? 0.05) * 100, 1)}% of it (--harness-error-share): the processes’ p50 lateness against the metric’s p50, their p99 against its p99, whichever share is larger.</p>
<p>Whether servelab’s own processes or the host could have shaped these numbers (${escapeHtml(harnessWatchedText(harness))}). Processes over these are named as causes: event-loop delay p99 ${number(thresholds.event_loop_delay_p99_ms, 1)} ms, step lateness p99 ${number(thresholds.step_lateness_p99_ms, 1)} ms, send lag p99 ${number(thresholds.send_lag_p99_ms, 1)} ms, process CPU ${number(thresholds.process_cpu_share_of_one_core * 100, 0)}% of one core, host CPU ${number(thresholds.host_cpu_busy_share * 100, 0)}% busy.</p>
${warnings}
${table(['process', 'event-loop delay p99 / max (ms)', 'CPU (of one core)', 'step lateness p99 (ms)', 'send lag p99 (ms)'], rows)}
${notChecked === '' ? '' : `<p class="meta">Not checked (they do not report on themselves yet): ${escapeHtml(notChecked)}.</p>`}</section>`;
}

/**
 * How far the instants sent (and received) depart from the scheduled arrival process (docs/metrics.md, "Sent
 * process"): each source's gaps against the process's law, the send lag and the clumps. Empty where it is not assessed.
 */
function sentProcessSection(summary: Summary): string {
  const report = summary.dataQuality?.sentProcess;
  if (report === undefined) return '';
  const rows = report.tests.map((test) => [test.source, String(test.gaps), number(test.statistic, 4), formatPValue(test.pValue), test.passed ? 'passes' : 'fails']);
  const lag = report.sendLagMs === null ? '' : ` Send lag p50 ${number(report.sendLagMs.p50, 3)} ms, p99 ${number(report.sendLagMs.p99, 3)} ms, max ${number(report.sendLagMs.max, 3)} ms.`;
  const clumps = report.clumps.pairs === 0 ? '' : ` ${report.clumps.clumped} of ${report.clumps.pairs} requests scheduled ${report.clumps.scheduledGapMs} ms or more after the one before left within ${report.clumps.thresholdMs} ms of it (${number(report.clumps.share * 100, 1)}%).`;
  const heading = report.departs ? 'Sent process: departs from the schedule' : 'Sent process';
  const law = report.law === null ? `<p>Gaps not tested: ${escapeHtml(report.skippedReason ?? '')}.</p>` : `<p>Inter-arrival gaps of each source against the ${escapeHtml(report.law)} (the scheduled rate), one-sample Kolmogorov–Smirnov; a p-value below ${report.significance} fails.</p>`;
  return `<section class="sent-process"><h2>${heading}</h2>
${law}${rows.length === 0 ? '' : table(['instants', 'gaps', 'D', 'p', 'result'], rows)}
<p>${escapeHtml(`${lag}${clumps}`.trim())}</p></section>`;
}

function latencyTable(run: RunData, summary: Summary): string {
  const rows: string[][] = [];
  const unmodelled: ReadonlySet<string> = unmodelledColumns(run);
  for (const { name, meaning, statistics } of reportLatencyRows(summary)) {
    if (!statistics) continue;
    const flagged = summary.harness?.stages_flagged[name];
    const bound = summary.harness?.errorBounds?.[name];
    const qualifier = meaning ?? (unmodelled.has(name) ? NOT_MODELLED : undefined);
    rows.push([
      qualifier === undefined ? name : `${name} (${qualifier})`,
      String(statistics.count),
      ms(statistics.mean),
      ms(statistics.std),
      ms(statistics.min),
      ms(statistics.p50),
      ms(statistics.p90),
      ms(statistics.p95),
      ms(statistics.p99),
      ms(statistics.max),
      `${bound === undefined ? '' : harnessBoundText(bound)}${flagged === undefined ? '' : ` affected: ${flagged.join(', ')}`}`,
    ]);
  }
  return table(['column (ms)', 'count', 'mean', 'std', 'min', 'p50', 'p90', 'p95', 'p99', 'max', 'harness error bound'], rows);
}

/** How precise the headline percentiles are: what each p99 rests on and the bootstrap intervals (docs/statistics.md). */
function precisionSection(summary: Summary): string {
  const precision = summary.precision;
  if (precision === undefined || Object.keys(precision.metrics).length === 0) return '';
  const interval = (estimate: IntervalEstimate): string => (estimate.low === null || estimate.high === null ? '–' : `${ms(estimate.low)} – ${ms(estimate.high)}`);
  const rows = PRECISION_METRICS.flatMap(([key, label]) => {
    const metric = precision.metrics[key];
    if (metric === undefined) return [];
    return [[label, countText(metric.values), countText(metric.p99DecidedByTop), ms(metric.p50.estimate), interval(metric.p50), ms(metric.p90.estimate), interval(metric.p90), ms(metric.p99.estimate), interval(metric.p99)]];
  });
  return `<section id="precision"><h2>Precision</h2><p>${(precision.confidence * 100).toFixed(0)}% intervals from the bootstrap over this run's requests (${precision.resamples} resamples, seed ${precision.seed}); another run can differ by more: --repeats measures that (docs/statistics.md). Milliseconds.</p>
${table(['metric', 'values', 'top values deciding p99', 'p50', 'p50 interval', 'p90', 'p90 interval', 'p99', 'p99 interval'], rows)}</section>`;
}

function errorsSection(summary: Summary): string {
  const errors = summary.errors ?? [];
  if (errors.length === 0) return '';
  return `<section><h2>Errors</h2><p>Failed requests per error class, with the most common error message (first 200 characters).</p>
${table(
  ['error class', 'failed requests', 'most common message', 'requests with it'],
  errors.map((error) => [error.class, String(error.count), error.topMessage ?? '(no message)', String(error.topMessageCount)]),
)}</section>`;
}

function stagesTable(run: RunData, summary: Summary): string {
  const t0 = run.info.startTime;
  const stages = shownStages(run, summary);
  if (stages.length === 0) return '<p>No stage had both of its timestamps.</p>';
  const check = stages[0]?.[1].littlesLaw;
  const window =
    check?.windowStart === null || check?.windowStart === undefined || check.windowEnd === null
      ? 'no steady window (fewer than two distinct arrivals)'
      : `steady window ${number(check.windowStart - t0, 3)} s to ${number(check.windowEnd - t0, 3)} s after t0 (the middle 80% of the arrival period: ramp-up and drain left out)`;
  return `${table(
    ['stage', 'peak', 'time-weighted mean', 'entry rate (req/s)', 'mean residence (ms)', 'L (steady)', 'λ·W (steady)', 'Little’s law check'],
    stages.map(([stage, values]) => [
      stage,
      String(values.peak),
      number(values.timeWeightedMean, 3),
      number(values.entryRate, 2),
      ms(values.meanResidenceSeconds),
      number(values.littlesLaw.timeWeightedMean, 3),
      number(values.littlesLaw.prediction, 3),
      littlesLawVerdict(values.littlesLaw),
    ]),
  )}<p>Little’s law L = λW over the ${escapeHtml(window)}, tolerance ${number((check?.tolerance ?? 0) * 100, 0)}%. The first four columns cover first arrival to last finish, where λW = L holds by construction and checks nothing.</p>`;
}

function littlesLawVerdict(check: LittlesLawCheck): string {
  if (check.verdict === 'not_checked') return `not checked: ${check.reason ?? ''}`;
  return `${check.verdict} (error ${number((check.relativeError ?? 0) * 100, 2)}%)`;
}

function nodesSection(summary: Summary): string {
  const routing = summary.routing;
  if (!routing) return '';
  const affinity = routing.prefixGroupAffinity;
  const harnessFlags = summary.harness?.nodes_flagged ?? {};
  return `<section><h2>Nodes</h2>
<p>Imbalance: max/mean ${number(routing.imbalanceMaxOverMean, 3)}, coefficient of variation ${number(routing.imbalanceCv, 3)}.${
    affinity ? ` Prefix groups: on average ${number(affinity.meanShareOnTopNode * 100, 1)}% of a group’s requests went to its most-used node (minimum ${number(affinity.minShareOnTopNode * 100, 1)}%, ${affinity.groups} groups).` : ''
  }</p>
<div class="nodes">${table(
  ['node', 'URL', 'requests', 'share', 'failed', 'cache hit ratio', 'TTFT p50 (ms)', 'TTFT p99 (ms)', 'E2E p50 (ms)', 'pure queue p99 (ms)', 'peak in flight', 'mean in flight', 'harness'],
  nodesInIndexOrder(routing.nodes).map((node) => [
    node.node === null ? '–' : String(node.node),
    node.placedOn === undefined ? node.host : `${node.host} (${node.placedOn})`,
    String(node.requests),
    `${number(node.share * 100, 1)}%`,
    String(node.failed),
    number(node.cacheHitRatio, 3),
    ms(node.ttft?.p50),
    ms(node.ttft?.p99),
    ms(node.totalLatency?.p50),
    ms(node.pureQueueTime?.p99),
    String(node.peakInFlight),
    number(node.meanInFlight, 2),
    harnessFlags[node.host] === undefined ? '' : `suspect: ${(harnessFlags[node.host] as string[]).join(', ')}`,
  ]),
)}</div></section>`;
}

/** What failed beside the client (taps, scraper, a launched process, a reporter, the disk), and what was recovered. */
/** Prefill/decode disaggregation: the per-role tables, the pairs and, when the phases were measured, their breakdown. */
function pdSection(summary: Summary): string {
  if (summary.pd === undefined) return '';
  return `<section><h2>Prefill/decode disaggregation</h2>${pdTextSections(summary.pd)
    .map((part) => `<h3>${escapeHtml(part.title)}</h3><p>${escapeHtml(part.note)}</p>${table(part.header, part.rows)}`)
    .join('\n')}</section>`;
}

function noticesSection(run: RunData, summary: Summary): string {
  const notices = run.notices ?? [];
  // The data-quality cautions: numbers that are wrong though no field was left out (docs/metrics.md, "Data quality").
  const cautions = (summary.dataQuality?.cautions ?? []).map((caution) => `<p class="warning">Caution: ${escapeHtml(caution)}</p>`).join('\n');
  if (notices.length === 0 && run.recovered === undefined && cautions === '') return '';
  const t0 = run.info.startTime;
  const recovered = run.recovered === undefined ? '' : `<p class="notice">Recovered: ${escapeHtml(recoveryText(run.recovered))}</p>`;
  const rows = notices.map((notice) => [notice.time === undefined ? '' : number(notice.time - t0, 3), notice.source, notice.message]);
  return `<section><h2>Notices</h2>
<p>Parts beside the client that failed during the run. Requests are never dropped for them: columns they would have filled are empty.</p>
${cautions}${recovered}${rows.length === 0 ? '' : table(['time since t0 (s)', 'source', 'notice'], rows)}</section>`;
}

function eventsSection(run: RunData, summary: Summary): string {
  if (run.events.length === 0) return '';
  const impacts = summary.events ?? [];
  const t0 = run.info.startTime;
  const arrow = (before: number | null, after: number | null, digits: number, scale = 1): string =>
    `${number(before === null ? null : before * scale, digits)} → ${number(after === null ? null : after * scale, digits)}`;
  return `<section><h2>Events</h2>
<p>Each event compared with the ${'≤'}10 s before and after it. An event on a node is analysed on that node’s own requests (those it served or the router chose it for); the baseline is cut at the previous event (simultaneous ones, under 1 s apart, excepted) and never reaches into the ramp-up (before first arrival + 10% of the arrival period). “errors for” is the time from the event to the last failure before the node’s next event.${
    impacts.find((impact) => impact.recoveryRule !== undefined)?.recoveryRule === undefined
      ? ''
      : ` Recovery: ${escapeHtml(impacts.find((impact) => impact.recoveryRule !== undefined)?.recoveryRule ?? '')}.`
  }</p>
${table(
  ['time since t0 (s)', 'event', 'node', 'URL', 'analysed over', 'detail', 'failures until next event', 'errors for (s)', 'completed/s before → after', 'failed/s before → after', 'TTFT p50 (ms) before → after', 'recovery (restore) or stalled requests (hang)'],
  run.events.map((event) => {
    const impact = impacts.find((candidate) => candidate.time === event.time && candidate.kind === event.kind && candidate.node === event.node);
    return [
      number(event.time - t0, 3),
      event.kind,
      event.node === undefined ? '' : `${event.node}${event.role === undefined ? '' : ` (${event.role})`}`,
      impact?.nodeUrl ?? '',
      impact === undefined ? '–' : impact.attribution === 'node' ? 'the node’s requests' : 'all requests',
      event.detail ?? '',
      impact ? String(impact.failuresUntilNextEvent) : '–',
      number(impact?.errorsStoppedAfterSeconds, 3),
      impact ? arrow(impact.before.completionsPerSecond, impact.after.completionsPerSecond, 2) : '–',
      impact ? arrow(impact.before.failuresPerSecond, impact.after.failuresPerSecond, 2) : '–',
      impact ? arrow(impact.before.ttftP50, impact.after.ttftP50, 2, 1000) : '–',
      impact === undefined ? '' : (eventRecoveryText(impact, (seconds) => number(seconds, 1)) ?? eventStallText(impact, (seconds) => number(seconds, 2)) ?? ''),
    ];
  }),
)}</section>`;
}

/** Nesting depth of `extras` shown as nested definition lists; deeper values are shown as compact JSON. */
const EXTRAS_DEPTH = 3;
/** Arrays longer than this are summarized by their length instead of listed. */
const EXTRAS_LIST_ITEMS = 10;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isDurationSummary(value: unknown): value is DurationSummary {
  return isRecord(value) && ['count', 'p50Ms', 'p99Ms', 'maxMs'].every((key) => typeof value[key] === 'number');
}

/** Any value of `extras` as escaped HTML: scalars as text, objects as definition lists, short arrays inline. */
function extrasValue(value: unknown, depth: number): string {
  if (value === null || value === undefined) return '–';
  if (typeof value === 'number') return escapeHtml(Number.isInteger(value) ? String(value) : number(value, 3));
  if (typeof value === 'string' || typeof value === 'boolean') return escapeHtml(String(value));
  if (Array.isArray(value)) {
    if (value.length > EXTRAS_LIST_ITEMS) return `${value.length} items`;
    if (value.every((item) => !isRecord(item) && !Array.isArray(item))) return value.map((item) => extrasValue(item, depth + 1)).join(', ');
  }
  if (depth >= EXTRAS_DEPTH || Array.isArray(value)) return `<code>${escapeHtml(JSON.stringify(value))}</code>`;
  return definitionList(value as Record<string, unknown>, depth + 1);
}

function definitionList(entries: Record<string, unknown>, depth: number): string {
  const items = Object.entries(entries).map(([key, value]) => `<dt>${escapeHtml(key)}</dt><dd>${extrasValue(value, depth)}</dd>`);
  return items.length === 0 ? '–' : `<dl>${items.join('')}</dl>`;
}

/**
 * `run.extras`: the taps' overhead (`taps.overhead`: inbound and relay durations) as a table, everything else as a
 * definition list.
 */
function extrasSection(extras: Record<string, unknown> | undefined): string {
  if (extras === undefined || Object.keys(extras).every((key) => key === 'harness')) return '';
  const rest: Record<string, unknown> = { ...extras };
  // Shown, assessed, in the Harness section.
  delete rest['harness'];
  let overheadTable = '';
  const taps = extras['taps'];
  if (isRecord(taps) && isRecord(taps['overhead'])) {
    const overhead = taps['overhead'];
    const parts: [string, string][] = [['inbound (request in → handed upstream)', 'inboundMs'], ['relay (response copied, per request)', 'relayMs']];
    const rows = parts.flatMap(([label, key]) => {
      const durations = overhead[key];
      return isDurationSummary(durations)
        ? [[label, number(durations.p50Ms, 3), number(durations.p99Ms, 3), number(durations.maxMs, 3), String(durations.count)]]
        : [];
    });
    if (rows.length > 0) {
      overheadTable = `<h3>Tracing taps’ own overhead</h3>${table(['tap stage', 'p50 (ms)', 'p99 (ms)', 'max (ms)', 'count'], rows)}`;
      const { overhead: _overhead, ...otherTapFields } = taps;
      if (Object.keys(otherTapFields).length > 0) rest['taps'] = otherTapFields;
      else delete rest['taps'];
    }
  }
  const sensitivity = twinSensitivityOf(extras);
  if (sensitivity !== undefined) delete rest['twinSensitivity'];
  const others = Object.keys(rest).length > 0 ? definitionList(rest, 0) : '';
  return `${sensitivity === undefined ? '' : twinSensitivitySection(sensitivity)}${overheadTable === '' && others === '' ? '' : `<section><h2>Other measurements</h2>${overheadTable}${others}</section>`}`;
}

/** The twin's sensitivity band (extras.twinSensitivity): each metric at -e, 0 and +e, and the warning where one is due. */
function twinSensitivitySection(band: NonNullable<ReturnType<typeof twinSensitivityOf>>): string {
  const e = stepErrorPercentText(band.stepErrorPercent);
  const heading = `<h2>How far to trust the twin</h2><p>${escapeHtml(`The same workload run again in virtual time with every step ${e}% shorter and ${e}% longer; e = ${e}%: ${band.sourceDetail}.`)}</p>`;
  if ('skipped' in band) return `<section>${heading}<p>${escapeHtml(band.skipped)}</p></section>`;
  const value = (key: string, reading: number | null): string => (reading === null ? '–' : key === 'throughput' ? `${number(reading, 3)} req/s` : `${ms(reading)} ms`);
  const rows = Object.entries(band.metrics).map(([key, metric]) => [
    metric.name,
    value(key, metric.atMinus),
    value(key, metric.atZero),
    value(key, metric.atPlus),
    `${signedPercentText(metric.minusChangePercent)} / ${signedPercentText(metric.plusChangePercent)}`,
  ]);
  const warning = twinSensitivityWarning(band);
  const warned = warning === null ? '' : `<p class="warning">${escapeHtml(warning)}</p>`;
  return `<section>${heading}${table(['metric', `step times -${e}%`, 'as run', `step times +${e}%`, 'change (-e / +e)'], rows)}${warned}</section>`;
}

/** Each server's clock against this host's (docs/metrics.md, "Clocks"), with a warning where the offset matters. */
function clocksSection(summary: Summary): string {
  const estimates = summary.clockOffsets ?? [];
  if (estimates.length === 0) return '';
  const warnings = clockWarnings(summary)
    .map((warning) => `<p class="warning">${escapeHtml(warning)}</p>`)
    .join('\n');
  const rows = estimates.map((estimate) => [
    estimate.host,
    number(estimate.offsetMs, 3),
    number(estimate.uncertaintyMs, 3),
    number(estimate.driftPpm, 2),
    String(estimate.requestsUsed),
    estimate.corrected ? 'yes' : 'no',
    estimate.note,
  ]);
  return `<section><h2>Clocks</h2>
<p>Each server's clock offset from this host (server − client), bounded by every request's own instants: the server received a request after it was sent and stamped its first token before the client received it. Server instants in the tables and charts are corrected where the bounds exclude zero.</p>
${warnings}
${table(['server', 'offset (ms)', '± (ms)', 'drift (ppm)', 'requests', 'corrected', 'note'], rows)}</section>`;
}

function figure(chart: RenderedChart): string {
  return `<figure class="chart" id="chart-${escapeHtml(chart.name)}" data-chart="${escapeHtml(chart.name)}">
<figcaption><h3>${escapeHtml(chart.title)}</h3><p>${escapeHtml(chart.description)}</p></figcaption>
${chart.svg}
</figure>`;
}

const STYLE = `
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 2rem auto; max-width: 1100px; color: #222; padding: 0 1rem; }
h1 { font-size: 1.5rem; margin-bottom: 0.2rem; } h2 { margin-top: 2rem; border-bottom: 1px solid #ddd; } h3 { margin: 0; font-size: 1rem; }
.meta { color: #555; } .status { padding: 0.1rem 0.5rem; border-radius: 0.3rem; color: white; }
.status-completed { background: #2e7d32; }
.verdict h2 { border: none; padding: 0.3rem 0.6rem; color: white; } .verdict-stable h2 { background: #2e7d32; }
.verdict-saturated h2 { background: #c62828; } .verdict-unknown h2 { background: #757575; } .status-interrupted { background: #ef6c00; } .status-failed { background: #c62828; }
table { border-collapse: collapse; margin: 0.5rem 0; font-size: 0.85rem; } th, td { border: 1px solid #ddd; padding: 0.25rem 0.5rem; text-align: right; }
th:first-child, td:first-child { text-align: left; } thead { background: #f5f5f5; }
figure.chart { margin: 1.5rem 0; } figcaption p { margin: 0.2rem 0 0.5rem; color: #555; font-size: 0.85rem; }
figure.chart svg { max-width: 100%; height: auto; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.15rem 1rem; font-size: 0.85rem; margin: 0.5rem 0; }
.warning { background: #fff3e0; border-left: 4px solid #ef6c00; padding: 0.3rem 0.6rem; }
.nodes td { white-space: nowrap; }
dt { font-weight: bold; } dd { margin: 0; } dd dl { margin: 0; }
`;

/** The whole report as one HTML document: tables and inline SVG charts, no script, nothing fetched from the network. */
export function buildReportHtml(run: RunData, summary: Summary, charts: readonly RenderedChart[]): string {
  const { info } = run;
  const t0 = new Date(info.startTime * 1000).toISOString();
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>servelab report: ${escapeHtml(info.runId)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>servelab ${escapeHtml(info.testLevel)} test: ${escapeHtml(info.runId)}</h1>
<p class="meta"><span class="status status-${escapeHtml(info.status)}">${escapeHtml(info.status)}</span>
target ${escapeHtml(info.target)}${info.simulated ? ' (virtual time)' : ''} · t0 ${escapeHtml(t0)} · servelab ${escapeHtml(info.servelabVersion)}</p>
</header>
${verdictSection(summary)}
${harnessSection(summary)}
${sentProcessSection(summary)}
<section><h2>Overview</h2>${overview(run, summary)}</section>
${clocksSection(summary)}
${errorsSection(summary)}
<section><h2>Latencies</h2><p>Over succeeded requests (send lag over every sent request). Definitions: docs/metrics.md.${summary.pd === undefined ? '' : ' Prefill/decode run: the server columns are the decode server’s (it answered), the prefill half comes from the PD phase columns, and each server stage says what it measures; the decode server’s tokenize is not measured (docs/metrics.md, “Stages in a PD run”).'}</p>${latencyTable(run, summary)}</section>
${precisionSection(summary)}
<section><h2>Concurrency by stage</h2>${stagesTable(run, summary)}</section>
${nodesSection(summary)}
${pdSection(summary)}
${noticesSection(run, summary)}
${eventsSection(run, summary)}
${extrasSection(run.extras)}
<section><h2>Charts</h2>
${charts.map(figure).join('\n')}
</section>
</body>
</html>
`;
}

/** `report.html`: self-contained (inline SVG charts, no script, opens offline). */
export const htmlReporter: Reporter = {
  name: 'html',
  async write(context: ReportContext): Promise<string[]> {
    const path = join(context.outputDirectory, REPORT_HTML);
    await writeFileAtomic(path, buildReportHtml(context.run, context.summary, await renderedCharts(context)));
    return [path];
  },
};
