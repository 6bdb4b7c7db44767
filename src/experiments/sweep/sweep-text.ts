import type { SloTargets } from '../../types/summary.js';
import type { SearchOutcome, SweepRunOutcome } from './run-sweep.js';
import type { SweepPlan } from './sweep-plan.js';

/** A rate as a reader wants it: three significant figures, whole numbers from 100 up (47.568… req/s → 47.6). */
export function roundedRate(rate: number): string {
  if (!Number.isFinite(rate)) return String(rate);
  return Math.abs(rate) >= 100 ? rate.toFixed(0) : String(Number(rate.toPrecision(3)));
}

function objectivesText(slo: SloTargets, attainment: number): string {
  const names: [keyof SloTargets, string][] = [['ttftMs', 'TTFT'], ['tpotMs', 'TPOT'], ['totalMs', 'end-to-end latency']];
  const parts = names.filter(([key]) => slo[key] !== undefined).map(([key, name]) => `${name} ≤ ${slo[key]} ms`);
  return `${parts.join(', ')} for ${Math.round(attainment * 1000) / 10}% of requests`;
}

/** The settings a grid point varies, as `name=value` pairs; "base settings" for a search with no grid. */
function pointText(values: Record<string, unknown>): string {
  const parts = Object.entries(values)
    .filter(([key]) => key !== 'slo')
    .map(([key, value]) => `${key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)}=${typeof value === 'object' ? JSON.stringify(value) : String(value)}`);
  return parts.length === 0 ? 'base settings' : parts.join(' ');
}

/**
 * The sweep's answers, one line per searched point, first: what a researcher ran the sweep for, rounded as it reads
 * (the bisection's own precision is in search.csv). The answer is a range, the highest rate that passed and the lowest
 * that failed, under the criterion named in the line: objectives met in a run the verdict judged STABLE.
 */
export function searchAnswerLines(searches: readonly SearchOutcome[], search: NonNullable<SweepPlan['search']>): string[] {
  return searches.map((outcome) => {
    const where = pointText(outcome.values);
    const objectives = objectivesText(search.slo, search.attainment);
    const rate = (value: number): string => `${roundedRate(value)} req/s`;
    const notJudged = outcome.notJudgedRates.length === 0 ? '' : `; ${outcome.notJudgedRates.map(rate).join(', ')} not judged (search_why in sweep.csv)`;
    let answer: string;
    if (outcome.highestPassingRate === null) {
      answer = outcome.lowestFailingRate === null ? 'none judged' : `none, ${rate(outcome.lowestFailingRate)} failed`;
    } else if (outcome.lowestFailingRate === null) {
      answer = `${rate(outcome.highestPassingRate)}, every judged rate passed, up to ${rate(search.highRate)}`;
    } else {
      answer = `between ${roundedRate(outcome.highestPassingRate)} (passed) and ${rate(outcome.lowestFailingRate)} (failed)`;
    }
    return `Highest rate meeting the objectives (${objectives}, run STABLE), ${where}: ${answer}${notJudged}`;
  });
}

const milliseconds = (seconds: number | undefined): string => (seconds === undefined ? '' : (seconds * 1000).toFixed(1));

/**
 * One row per run, a few columns: what each run varied and how it did. Every metric of every run is in compare.csv;
 * the full comparison (one column per run) is too wide to read in a terminal.
 */
/** A repeated grid point's row: its estimates over the repeats (the 95% intervals are in sweep.csv and its runs/<label>/). */
function repeatedRow(run: SweepRunOutcome, series: NonNullable<SweepRunOutcome['series']>): string[] {
  const estimate = (metric: string, statistic: string): number | undefined =>
    series.combined.metrics.find((entry) => entry.metric === metric && entry.statistic === statistic)?.estimate;
  const ms = (value: number | undefined): string => (value === undefined ? '' : value.toFixed(1));
  return [
    `grid x${series.repeats.length}`,
    pointText(run.values),
    series.repeats.map((result) => (result.status === 'completed' ? result.metrics.verdict.state.toUpperCase() : result.status)).join(' '),
    '',
    '',
    estimate('request_throughput', 'value')?.toFixed(1) ?? '',
    ms(estimate('ttft', 'p50')),
    ms(estimate('ttft', 'p99')),
    ms(estimate('tpot', 'p99')),
    ms(estimate('total_latency', 'p99')),
    String(series.repeats.reduce((sum, result) => sum + result.metrics.counts.failed, 0)),
  ];
}

export function sweepRunsTable(runs: readonly SweepRunOutcome[]): string {
  // A finished run's status is its verdict (STABLE, SATURATED, UNKNOWN); any other status (failed, interrupted) as is.
  const header = ['run', 'settings', 'status', 'SLO met', 'search', 'req/s', 'TTFT p50 ms', 'TTFT p99 ms', 'TPOT p99 ms', 'E2E p99 ms', 'failed'];
  const rows = runs.map((run) => {
    const metrics = run.result?.metrics;
    if (run.series !== undefined) return repeatedRow(run, run.series);
    return [
      run.label.startsWith('search__') ? 'search' : 'grid',
      pointText(run.values),
      run.result === undefined ? 'failed' : run.result.status === 'completed' ? run.result.metrics.verdict.state.toUpperCase() : run.result.status,
      run.meetsSlo === undefined ? '' : run.meetsSlo ? 'yes' : 'no',
      run.judgement === undefined ? '' : run.judgement.state.replace('_', ' '),
      metrics === undefined ? '' : metrics.throughput.requestsPerSecond.toFixed(1),
      milliseconds(metrics?.latencies.ttft?.p50),
      milliseconds(metrics?.latencies.ttft?.p99),
      milliseconds(metrics?.latencies.tpot?.p99),
      milliseconds(metrics?.latencies.total_latency?.p99),
      metrics === undefined ? '' : String(metrics.counts.failed),
    ];
  });
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] as string).length)));
  // Text columns left-aligned, numbers right-aligned.
  const render = (cells: readonly string[]): string =>
    cells.map((cell, column) => (column < 5 ? cell.padEnd(widths[column] as number) : cell.padStart(widths[column] as number))).join('  ').trimEnd();
  return `${[render(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(render)].join('\n')}\n`;
}
