import type { HarnessErrorBound, HarnessMeasurements, HarnessProcess, HarnessReport, HarnessRole, HarnessThresholds, HarnessWarning } from '../types/harness.js';
import type { DerivedColumnName } from '../types/summary.js';
import { DERIVED_COLUMN_NAMES } from './derive.js';

/**
 * Above these, a process or the host is named as a possible cause (docs/metrics.md, "Harness"). The 1 ms bounds are
 * the precision servelab promises for its timestamps and the simulated engine's step timing. The grade itself weighs
 * the measured lateness against the metrics it affects: `metric_error_share` of a metric's p50.
 */
export const HARNESS_THRESHOLDS: HarnessThresholds = {
  event_loop_delay_p99_ms: 1,
  step_lateness_p99_ms: 1,
  send_lag_p99_ms: 1,
  process_cpu_share_of_one_core: 0.9,
  host_cpu_busy_share: 0.9,
  metric_error_share: 0.05,
};

type Stage = DerivedColumnName | 'itl';

/** The columns the client's own timestamps (arrival, first token, token gaps, finish) enter. */
const CLIENT_STAGES: readonly Stage[] = ['ttft', 'total_latency', 'queue_time_in_router', 'server_latency', 'decode_time', 'tpot', 'itl', 'send_lag', 'intended_latency'];
/** A relay (router or tap) delays what passes through it and, for the stamping one, router_send_time. */
const RELAY_STAGES: readonly Stage[] = ['queue_time_in_router', 'network_time', 'server_latency', 'ttft', 'total_latency', 'decode_time', 'tpot', 'itl'];
/** A simulated server's step timing and its own timestamps. */
const SERVER_STAGES: readonly Stage[] = ['network_time', 'tokenize_time', 'pure_queue_time', 'queue_time_in_server', 'prefill_time', 'server_ttft', 'server_latency', 'ttft', 'total_latency', 'decode_time', 'tpot', 'itl'];
const ALL_STAGES: readonly Stage[] = [...new Set<Stage>([...CLIENT_STAGES, ...RELAY_STAGES, ...SERVER_STAGES])];
/** The order reports list metrics in. */
const STAGE_ORDER: readonly Stage[] = [...DERIVED_COLUMN_NAMES, 'itl'];
/** The run's headline latencies: a bound above the share on one of them makes the whole run suspect. */
const HEADLINE_STAGES: readonly Stage[] = ['ttft', 'total_latency'];
/** send_lag is the harness's own lateness: it is reported as measured, never weighed against itself. */
const UNWEIGHED_STAGES: ReadonlySet<Stage> = new Set(['send_lag']);

/** Metric values below this (ms) are not weighed: a microsecond is the timestamps' resolution. */
const MIN_WEIGHED_VALUE_MS = 0.001;

const STAGES_BY_ROLE: Record<HarnessRole, readonly Stage[]> = { client: CLIENT_STAGES, router: RELAY_STAGES, taps: RELAY_STAGES, 'sim-server': SERVER_STAGES };

function processWarnings(process: HarnessProcess, thresholds: HarnessThresholds): HarnessWarning[] {
  const warnings: HarnessWarning[] = [];
  const warn = (problem: string, stages: readonly Stage[]): void => {
    warnings.push({ process: process.name, ...(process.node === undefined ? {} : { node: process.node }), problem, stages: [...stages] });
  };
  const stages = STAGES_BY_ROLE[process.role];
  const delay = process.event_loop_delay_ms;
  if (delay !== null && delay.p99 > thresholds.event_loop_delay_p99_ms) {
    warn(`event-loop delay p99 ${delay.p99.toFixed(2)} ms > ${thresholds.event_loop_delay_p99_ms} ms (max ${delay.max.toFixed(1)} ms)`, stages);
  }
  if (process.cpu_share_of_one_core > thresholds.process_cpu_share_of_one_core) {
    warn(`CPU ${(process.cpu_share_of_one_core * 100).toFixed(0)}% of one core > ${thresholds.process_cpu_share_of_one_core * 100}%: its event loop was busy nearly all the time`, stages);
  }
  const lateness = process.step_lateness_ms;
  if (lateness !== undefined && lateness.p99 > thresholds.step_lateness_p99_ms) {
    warn(`engine steps ran late against the model: p99 ${lateness.p99.toFixed(2)} ms > ${thresholds.step_lateness_p99_ms} ms`, SERVER_STAGES);
  }
  if (process.send_lag_p99_ms !== undefined && process.send_lag_p99_ms > thresholds.send_lag_p99_ms) {
    warn(`send lag p99 ${process.send_lag_p99_ms.toFixed(2)} ms > ${thresholds.send_lag_p99_ms} ms: requests left later than scheduled`, ['send_lag', 'intended_latency']);
  }
  return warnings;
}

/** What the bound is weighed against: each metric's p50 and p99 in ms, and the mean output tokens (TPOT spreads one decode span's error over them). */
export interface HarnessMetricValues {
  p50Ms: Partial<Record<string, number | null>>;
  p99Ms?: Partial<Record<string, number | null>>;
  meanOutputTokens?: number | null;
  /** The client's send lag p50 (ms), which intended_latency includes as its p99 bound includes the p99. */
  sendLagP50Ms?: number | null;
}

/**
 * How late one process can make one timestamp it takes or relays (ms), at p50 and p99: its event-loop delay (a
 * callback that stamps or relays waits that long), or a simulated server's step lateness (its tokens leave that late),
 * whichever is larger. CPU shares are causes, not sizes: a busy loop shows in its delay.
 */
function stampErrorMs(process: HarnessProcess): { p50: number; p99: number } {
  return {
    p50: Math.max(process.event_loop_delay_ms?.p50 ?? 0, process.step_lateness_ms?.p50 ?? 0),
    p99: Math.max(process.event_loop_delay_ms?.p99 ?? 0, process.step_lateness_ms?.p99 ?? 0),
  };
}

/**
 * Each metric's error bound: a duration between two instants moves by at most the lateness of the later one, and
 * lateness adds up along the path (a late server writes late, a late relay forwards late, a late client reads late),
 * so the bound is the sum over the processes whose stamps or relaying enter the metric. Several simulated servers
 * count once, by the latest (a request crosses one). TPOT divides one decode span by (output tokens − 1), and so its
 * bound; intended_latency adds the client's send lag.
 */
function errorBoundsOf(processes: readonly HarnessProcess[], values: HarnessMetricValues | undefined): Record<string, HarnessErrorBound> {
  const bounds: Record<string, HarnessErrorBound> = {};
  for (const stage of STAGE_ORDER) {
    if (UNWEIGHED_STAGES.has(stage)) continue;
    let p99 = 0;
    let p50 = 0;
    const sources: string[] = [];
    let server: { p50: number; p99: number; name: string } | undefined;
    for (const process of processes) {
      if (!STAGES_BY_ROLE[process.role].includes(stage)) continue;
      const error = stampErrorMs(process);
      if (stage === 'intended_latency' && process.role === 'client') {
        error.p99 += process.send_lag_p99_ms ?? 0;
        error.p50 += Math.max(0, values?.sendLagP50Ms ?? 0);
      }
      if (!(error.p99 > 0)) continue;
      if (process.role === 'sim-server') {
        if (server === undefined || error.p99 > server.p99) server = { ...error, name: process.name };
        continue;
      }
      p99 += error.p99;
      p50 += error.p50;
      sources.push(process.name);
    }
    if (server !== undefined) {
      p99 += server.p99;
      p50 += server.p50;
      sources.push(server.name);
    }
    if (!(p99 > 0)) continue;
    const tokens = values?.meanOutputTokens;
    if (stage === 'tpot' && tokens !== undefined && tokens !== null && tokens > 2) {
      p99 /= tokens - 1;
      p50 /= tokens - 1;
    }
    // Below a microsecond (the timestamps' resolution) a value is rounding: a stage the engine does not model.
    const positive = (value: number | null | undefined): number | null => (value !== undefined && value !== null && value >= MIN_WEIGHED_VALUE_MS ? value : null);
    const valueMs = positive(values?.p50Ms[stage]);
    const p99ValueMs = positive(values?.p99Ms?.[stage]) ?? valueMs;
    const shares = [valueMs === null ? null : p50 / valueMs, p99ValueMs === null ? null : p99 / p99ValueMs].filter((share): share is number => share !== null);
    bounds[stage] = {
      boundMs: round(p99),
      p50BoundMs: round(p50),
      valueMs: valueMs === null ? null : round(valueMs),
      p99ValueMs: p99ValueMs === null ? null : round(p99ValueMs),
      share: shares.length === 0 ? null : round(Math.max(...shares), 6),
      sources,
    };
  }
  return bounds;
}

function round(value: number, digits = 3): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/**
 * Checks what a run's processes and host measured about themselves: the error bound on each metric they affect,
 * weighed against the metric (`values`: its p50 against the processes' p50 lateness, its p99 against their p99), grades the run (clean, affected, suspect); warnings name each process
 * over a raw threshold as a cause. Without `values` nothing can be weighed, and any warning makes the run suspect.
 */
export function assessHarness(measurements: HarnessMeasurements, thresholds: HarnessThresholds = HARNESS_THRESHOLDS, values?: HarnessMetricValues): HarnessReport {
  const warnings = measurements.processes.flatMap((process) => processWarnings(process, thresholds));
  const host = measurements.host_cpu;
  if (host !== null && host.busy_share_mean > thresholds.host_cpu_busy_share) {
    warnings.push({
      process: 'host',
      problem: `host CPU ${(host.busy_share_mean * 100).toFixed(0)}% busy over the run (${host.cores} cores) > ${thresholds.host_cpu_busy_share * 100}%: every process waited for a core`,
      stages: [...ALL_STAGES],
    });
  }
  const errorBounds = errorBoundsOf(measurements.processes, values);
  const stagesFlagged: Record<string, string[]> = {};
  let affected: string[];
  let state: HarnessReport['state'];
  if (values === undefined) {
    for (const warning of warnings) {
      for (const stage of warning.stages) {
        const names = (stagesFlagged[stage] ??= []);
        if (!names.includes(warning.process)) names.push(warning.process);
      }
    }
    affected = STAGE_ORDER.filter((stage) => stagesFlagged[stage] !== undefined);
    state = warnings.length > 0 ? 'suspect' : 'clean';
  } else {
    affected = STAGE_ORDER.filter((stage) => {
      const share = errorBounds[stage]?.share;
      return share !== null && share !== undefined && share > thresholds.metric_error_share;
    });
    for (const stage of affected) stagesFlagged[stage] = [...(errorBounds[stage]?.sources ?? [])];
    state = affected.some((stage) => (HEADLINE_STAGES as readonly string[]).includes(stage)) ? 'suspect' : affected.length > 0 ? 'affected' : 'clean';
  }
  // A server's lateness concerns its own node; a relay's or the client's concerns every node.
  const nodesFlagged: Record<string, string[]> = {};
  if (state !== 'clean') {
    const behind = new Set(Object.values(stagesFlagged).flat());
    if (values === undefined) for (const warning of warnings) behind.add(warning.process);
    for (const cause of behind) {
      const causeProcess = measurements.processes.find((process) => process.name === cause);
      for (const process of measurements.processes) {
        if (process.node === undefined || (causeProcess?.node !== undefined && causeProcess.node !== process.node)) continue;
        const names = (nodesFlagged[process.node] ??= []);
        if (!names.includes(cause)) names.push(cause);
      }
    }
  }
  return {
    state,
    affected,
    errorBounds,
    warnings,
    stages_flagged: stagesFlagged,
    nodes_flagged: nodesFlagged,
    processes: measurements.processes,
    host_cpu: host,
    missing: measurements.missing,
    thresholds,
  };
}

/**
 * The harness measurements a run carries in `extras.harness` (as the orchestration collected them, or as summary.json
 * gave them back); undefined when the run has none (virtual time, a run written before servelab watched itself).
 */
export function harnessMeasurementsOf(extras: Record<string, unknown> | undefined): HarnessMeasurements | undefined {
  const value = extras?.['harness'];
  if (typeof value !== 'object' || value === null) return undefined;
  const candidate = value as Partial<HarnessMeasurements>;
  if (!Array.isArray(candidate.processes) || !Array.isArray(candidate.missing)) return undefined;
  return { processes: candidate.processes, host_cpu: candidate.host_cpu ?? null, missing: candidate.missing };
}

/**
 * The harness report of a run: its measurements with the client's send lag p99 (from the records, in seconds) added
 * to the client's entry, assessed against the thresholds.
 */
export function assessRunHarness(
  measurements: HarnessMeasurements,
  sendLagP99Seconds: number | null,
  values?: HarnessMetricValues,
  metricErrorShare: number = HARNESS_THRESHOLDS.metric_error_share,
  harnessLimitFailures = 0,
): HarnessReport {
  const processes = measurements.processes.map((process) =>
    process.role === 'client' && process.send_lag_p99_ms === undefined && sendLagP99Seconds !== null
      ? { ...process, send_lag_p99_ms: Math.round(sendLagP99Seconds * 1e6) / 1e3 }
      : process,
  );
  const report = assessHarness({ ...measurements, processes }, { ...HARNESS_THRESHOLDS, metric_error_share: metricErrorShare }, values);
  return withHarnessLimitFailures(report, harnessLimitFailures);
}

/**
 * Counts the requests servelab itself failed (`harness_limit`: the client ran out of file descriptors or of its body
 * budget) under the harness: they are servelab's failures, not the server's, so the run is SUSPECT (its success rate
 * and throughput measure servelab too) and the client is named with the count as the cause.
 */
export function withHarnessLimitFailures(report: HarnessReport, harnessLimitFailures: number): HarnessReport {
  if (!(harnessLimitFailures > 0)) return report;
  const warning = {
    process: 'client',
    problem: `${harnessLimitFailures} request${harnessLimitFailures === 1 ? '' : 's'} failed at servelab's own limit (harness_limit: its file descriptors or memory), not the server's`,
    stages: [],
  };
  return { ...report, state: 'suspect', warnings: [warning, ...report.warnings], harnessLimitFailures };
}
