import type { RequestRecord } from '../types/record.js';
import type { RunData } from '../types/run.js';
import type { GapLawTest, SentProcessReport } from '../types/summary.js';
import { gammaCdf } from './gamma-distribution.js';
import { kolmogorovSmirnovTest } from './kolmogorov-smirnov.js';
import { percentileOfSorted } from './statistics.js';

/** A p-value below this fails: 1 in 100 schedules drawn from the law itself fails by chance. */
export const GAP_TEST_SIGNIFICANCE = 0.01;
/** Sends closer than this (ms) left together: a clump. */
export const CLUMP_THRESHOLD_MS = 0.1;
/**
 * Only pairs the schedule put at least this far apart (ms) are judged: a schedule draws gaps near 0 too (at 400 req/s
 * 4% are below 0.1 ms), and a tenth of a millisecond of honest jitter must not turn those into clumps.
 */
export const CLUMP_SCHEDULED_GAP_MS = 1;
/** Fewer gaps than this are not tested: the test could not tell a departure from chance. */
const MIN_GAPS = 10;

type Source = GapLawTest['source'];

/** The gaps between consecutive instants, in time order (instants missing on a record are skipped). */
function gapsOf(records: readonly RequestRecord[], instant: (record: RequestRecord) => number | undefined): Float64Array {
  const times: number[] = [];
  for (const record of records) {
    const time = instant(record);
    if (time !== undefined && Number.isFinite(time)) times.push(time);
  }
  const sorted = Float64Array.from(times).sort();
  const gaps = new Float64Array(Math.max(0, sorted.length - 1));
  for (let index = 1; index < sorted.length; index++) gaps[index - 1] = (sorted[index] as number) - (sorted[index - 1] as number);
  return gaps.sort();
}

/** The law of the gaps for the run's arrival process at `rate`, or why there is none to test against. */
function lawOf(config: Record<string, unknown>, rate: number | null): { cdf: (gapSeconds: number) => number; name: string } | string {
  const process = typeof config['arrival'] === 'string' ? config['arrival'] : 'poisson';
  if (config['stages'] !== undefined) return 'staged load changes its rate over time: its gaps follow no single law';
  if (process === 'trace') return 'trace replay: the gaps are the trace\'s, with no law to test them against; send lag and clumps say how far sends strayed';
  if (process === 'constant') return 'constant arrivals have one gap, no law of chance to test; send lag and clumps say how far sends strayed';
  if (rate === null || !Number.isFinite(rate) || rate <= 0) return 'no scheduled rate (every request at one instant): no gap to test';
  if (process === 'gamma') {
    const shape = typeof config['burstiness'] === 'number' ? config['burstiness'] : 1;
    const scale = 1 / (rate * shape);
    return { cdf: (gap) => gammaCdf(gap, shape, scale), name: `gamma, shape ${shape}, rate ${formatRate(rate)} /s` };
  }
  if (process === 'poisson') return { cdf: (gap) => (gap <= 0 ? 0 : 1 - Math.exp(-rate * gap)), name: `exponential, rate ${formatRate(rate)} /s` };
  return `the arrival process ${process} is not built in: its law is not known here`;
}

function formatRate(rate: number): string {
  return Number(rate.toPrecision(6)).toString();
}

/** (n − 1) / (last − first) of the scheduled instants: the rate the schedule was drawn at (the target when conditioned). */
function scheduledRateOf(records: readonly RequestRecord[]): number | null {
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const record of records) {
    if (record.scheduledTime < first) first = record.scheduledTime;
    if (record.scheduledTime > last) last = record.scheduledTime;
  }
  return records.length >= 2 && last > first ? (records.length - 1) / (last - first) : null;
}

/** Pairs consecutive in the schedule, at least CLUMP_SCHEDULED_GAP_MS apart in it, that were sent less than the threshold apart (or in the other order). */
function countClumps(records: readonly RequestRecord[]): SentProcessReport['clumps'] {
  const sent = records.filter((record) => record.arrivalTime !== undefined).sort((a, b) => a.scheduledTime - b.scheduledTime);
  const thresholdS = CLUMP_THRESHOLD_MS / 1000;
  const scheduledGapS = CLUMP_SCHEDULED_GAP_MS / 1000;
  let pairs = 0;
  let clumped = 0;
  for (let index = 1; index < sent.length; index++) {
    const previous = sent[index - 1] as RequestRecord;
    const current = sent[index] as RequestRecord;
    if (current.scheduledTime - previous.scheduledTime < scheduledGapS) continue;
    pairs++;
    if ((current.arrivalTime as number) - (previous.arrivalTime as number) < thresholdS) clumped++;
  }
  return { thresholdMs: CLUMP_THRESHOLD_MS, scheduledGapMs: CLUMP_SCHEDULED_GAP_MS, pairs, clumped, share: pairs > 0 ? clumped / pairs : 0 };
}

function sendLagOf(records: readonly RequestRecord[]): SentProcessReport['sendLagMs'] {
  const lags: number[] = [];
  for (const record of records) {
    if (record.heldForConcurrency !== true && record.arrivalTime !== undefined) lags.push((record.arrivalTime - record.scheduledTime) * 1000);
  }
  if (lags.length === 0) return null;
  const sorted = Float64Array.from(lags).sort();
  return { p50: percentileOfSorted(sorted, 50), p99: percentileOfSorted(sorted, 99), max: sorted[sorted.length - 1] as number };
}

/** Whether the run was an open loop in real time: the only runs whose sends can depart from a schedule. */
function isRealTimeOpenLoop(run: Pick<RunData, 'info' | 'config'>): boolean {
  if (run.info.simulated) return false;
  if (run.config['concurrency'] !== undefined) return false;
  const stages = run.config['stages'];
  return !(Array.isArray(stages) && stages.some((stage) => typeof stage === 'object' && stage !== null && 'concurrency' in stage && (stage as { concurrency?: unknown }).concurrency !== undefined));
}

/**
 * How far the sent arrival process departs from the scheduled one (docs/metrics.md, "Sent process"): the gaps of the
 * scheduled, sent, router-forwarded and server-received instants each tested against the process's law at the
 * scheduled rate, the send lag and the clumps. Undefined for virtual time and closed loops, whose sends follow no schedule.
 */
export function assessSentProcess(run: Pick<RunData, 'info' | 'config'>, records: readonly RequestRecord[]): SentProcessReport | undefined {
  if (!isRealTimeOpenLoop(run) || records.length === 0) return undefined;
  const held = records.filter((record) => record.heldForConcurrency === true).length;
  const law = lawOf(run.config, scheduledRateOf(records));
  const tests: GapLawTest[] = [];
  let skippedReason: string | null = typeof law === 'string' ? law : null;
  if (typeof law !== 'string' && held > 0) {
    skippedReason = `--max-concurrency held ${held} of ${records.length} requests back: the sent process follows the cap by design, not the schedule's law`;
  }
  if (skippedReason === null && typeof law !== 'string') {
    const sources: [Source, (record: RequestRecord) => number | undefined][] = [
      ['scheduled', (record) => record.scheduledTime],
      ['sent', (record) => record.arrivalTime],
    ];
    // In a node test router_send_time is the arrival itself; only a router's own stamp is a further view.
    if (run.info.testLevel === 'routing') sources.push(['router', (record) => record.routerSendTime]);
    sources.push(['server', (record) => record.serverCreatedTime]);
    for (const [source, instant] of sources) {
      const gaps = gapsOf(records, instant);
      if (gaps.length < MIN_GAPS) continue;
      const result = kolmogorovSmirnovTest(gaps, law.cdf);
      if (result === null) continue;
      tests.push({ source, gaps: result.count, statistic: result.statistic, pValue: result.pValue, passed: result.pValue >= GAP_TEST_SIGNIFICANCE });
    }
  }
  const scheduled = tests.find((test) => test.source === 'scheduled');
  const sent = tests.find((test) => test.source === 'sent');
  return {
    law: typeof law === 'string' ? null : law.name,
    skippedReason,
    significance: GAP_TEST_SIGNIFICANCE,
    tests,
    sendLagMs: sendLagOf(records),
    clumps: countClumps(records),
    departs: scheduled !== undefined && sent !== undefined && scheduled.passed && !sent.passed,
  };
}

function describeTest(test: GapLawTest): string {
  return `D ${test.statistic.toFixed(4)}, p ${formatPValue(test.pValue)}`;
}

/** A p-value as text: two significant digits, small ones in exponent form, one below a double's range as such. */
export function formatPValue(pValue: number): string {
  if (pValue < 1e-300) return '< 1e-300';
  return pValue < 0.001 ? pValue.toExponential(1) : pValue.toPrecision(2);
}

/**
 * The data-quality caution of a run whose sent process fails the test its schedule passes, with the figures that say
 * by how much; undefined otherwise (a warning that is always on would be ignored).
 */
export function sentProcessCaution(report: SentProcessReport | undefined): string | undefined {
  if (report === undefined || !report.departs) return undefined;
  const scheduled = report.tests.find((test) => test.source === 'scheduled') as GapLawTest;
  const sent = report.tests.find((test) => test.source === 'sent') as GapLawTest;
  const received = report.tests.filter((test) => test.source === 'router' || test.source === 'server').map((test) => `${test.source}-side ${describeTest(test)}`);
  const lag = report.sendLagMs === null ? '' : `; send lag p50 ${report.sendLagMs.p50.toFixed(2)} ms, p99 ${report.sendLagMs.p99.toFixed(2)} ms`;
  const clumps = report.clumps.pairs > 0 ? `; ${(100 * report.clumps.share).toFixed(1)}% of the requests scheduled ${report.clumps.scheduledGapMs} ms or more after the one before left within ${report.clumps.thresholdMs} ms of it` : '';
  return (
    `the load as sent is not the arrival process asked for: its gaps fail the KS test against the ${report.law} (${describeTest(sent)}) that the schedule's pass (${describeTest(scheduled)})` +
    `${received.length > 0 ? `, ${received.join(', ')}` : ''}${lag}${clumps}. ` +
    'The latencies are those of the load as sent; give the client a core of its own (a quieter host, --client-workers) for the process asked for'
  );
}
