import type { HarnessMeasurements, HarnessProcess, HarnessReport, HarnessRole, HarnessThresholds, HarnessWarning } from '../types/harness.js';
import type { DerivedColumnName } from '../types/summary.js';

/**
 * Above these, a process or the host may have shaped the run's numbers (docs/metrics.md, "Harness"). The 1 ms bounds
 * are the precision servelab promises for its timestamps and the simulated engine's step timing.
 */
export const HARNESS_THRESHOLDS: HarnessThresholds = {
  event_loop_delay_p99_ms: 1,
  step_lateness_p99_ms: 1,
  send_lag_p99_ms: 1,
  process_cpu_share_of_one_core: 0.9,
  host_cpu_busy_share: 0.9,
};

type Stage = DerivedColumnName | 'itl';

/** The columns the client's own timestamps (arrival, first token, token gaps, finish) enter. */
const CLIENT_STAGES: readonly Stage[] = ['ttft', 'total_latency', 'queue_time_in_router', 'server_latency', 'decode_time', 'tpot', 'itl', 'send_lag', 'intended_latency'];
/** A relay (router or tap) delays what passes through it and, for the stamping one, router_send_time. */
const RELAY_STAGES: readonly Stage[] = ['queue_time_in_router', 'network_time', 'server_latency', 'ttft', 'total_latency', 'decode_time', 'tpot', 'itl'];
/** A simulated server's step timing and its own timestamps. */
const SERVER_STAGES: readonly Stage[] = ['network_time', 'tokenize_time', 'pure_queue_time', 'queue_time_in_server', 'prefill_time', 'server_ttft', 'server_latency', 'ttft', 'total_latency', 'decode_time', 'tpot', 'itl'];
const ALL_STAGES: readonly Stage[] = [...new Set<Stage>([...CLIENT_STAGES, ...RELAY_STAGES, ...SERVER_STAGES])];

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

/**
 * Checks what a run's processes and host measured about themselves against the thresholds: a warning per process and
 * problem, naming the columns it can have inflated, and the same indexed by column and by node.
 */
export function assessHarness(measurements: HarnessMeasurements, thresholds: HarnessThresholds = HARNESS_THRESHOLDS): HarnessReport {
  const warnings = measurements.processes.flatMap((process) => processWarnings(process, thresholds));
  const host = measurements.host_cpu;
  if (host !== null && host.busy_share_mean > thresholds.host_cpu_busy_share) {
    warnings.push({
      process: 'host',
      problem: `host CPU ${(host.busy_share_mean * 100).toFixed(0)}% busy over the run (${host.cores} cores) > ${thresholds.host_cpu_busy_share * 100}%: every process waited for a core`,
      stages: [...ALL_STAGES],
    });
  }
  const stagesFlagged: Record<string, string[]> = {};
  const nodesFlagged: Record<string, string[]> = {};
  for (const warning of warnings) {
    for (const stage of warning.stages) {
      const names = (stagesFlagged[stage] ??= []);
      if (!names.includes(warning.process)) names.push(warning.process);
    }
    // A server's warning concerns its own node; a relay's, the client's or the host's concerns every node.
    for (const process of measurements.processes) {
      if (process.node === undefined || (warning.node !== undefined && warning.node !== process.node)) continue;
      const names = (nodesFlagged[process.node] ??= []);
      if (!names.includes(warning.process)) names.push(warning.process);
    }
  }
  return {
    state: warnings.length > 0 ? 'suspect' : 'clean',
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
export function assessRunHarness(measurements: HarnessMeasurements, sendLagP99Seconds: number | null): HarnessReport {
  const processes = measurements.processes.map((process) =>
    process.role === 'client' && process.send_lag_p99_ms === undefined && sendLagP99Seconds !== null
      ? { ...process, send_lag_p99_ms: Math.round(sendLagP99Seconds * 1e6) / 1e3 }
      : process,
  );
  return assessHarness({ ...measurements, processes });
}
