/**
 * How servelab's own processes and the host fared during a run (summary.json → `metrics.harness`). Names are
 * snake_case with their units. Definitions and thresholds: docs/metrics.md, "Harness".
 */

/** What one process measured about itself over the measured window. */
export interface ProcessHealth {
  pid: number;
  /**
   * Lateness of a 10 ms periodic timer on the process's event loop (perf_hooks.monitorEventLoopDelay, the period
   * taken off). Null for simulated servers: the timer would change how their arrivals batch; `step_lateness_ms` stands in.
   */
  event_loop_delay_ms: { p50: number; p99: number; max: number; samples: number } | null;
  /** User + system CPU seconds the process used in the window. */
  cpu_s: number;
  wall_s: number;
  /** cpu_s / wall_s: 1 means one core busy the whole time (a process's event loop runs on one core). */
  cpu_share_of_one_core: number;
  /** Simulated servers: how late their steps ran against the model's timeline (ms). */
  step_lateness_ms?: { p50: number; p99: number; max: number; steps: number };
}

export type HarnessRole = 'client' | 'router' | 'taps' | 'sim-server';

export interface HarnessProcess extends ProcessHealth {
  /** `client`, `router`, `taps`, `node-0`, …, `sim-server`. */
  name: string;
  role: HarnessRole;
  /** Simulated servers: the URL the records name as their host. */
  node?: string;
  /** The client: send lag (arrival − scheduled) p99 over the run, ms. */
  send_lag_p99_ms?: number;
}

/** The host's CPU, sampled from /proc/stat over the measured window. */
export interface HostCpu {
  cores: number;
  samples: number;
  interval_ms: number;
  /** Share of all cores' time not idle, over the whole window. */
  busy_share_mean: number;
  busy_share_max: number;
  /** Share of the samples in which the host was busier than the threshold. */
  share_of_samples_over_threshold: number;
}

/** What the orchestration collected: run.extras.harness. */
export interface HarnessMeasurements {
  processes: HarnessProcess[];
  /** Null where /proc/stat cannot be read (not Linux). */
  host_cpu: HostCpu | null;
  /** Processes that should have reported and did not (one line each). */
  missing: string[];
}

export interface HarnessWarning {
  /** The process (`client`, `router`, `taps`, `node-1`) or `host`. */
  process: string;
  node?: string;
  /** What was over which threshold, e.g. "event-loop delay p99 3.20 ms > 1 ms". */
  problem: string;
  /** The derived columns (requests.csv names) whose values it can have inflated. */
  stages: string[];
}

export interface HarnessThresholds {
  event_loop_delay_p99_ms: number;
  step_lateness_p99_ms: number;
  send_lag_p99_ms: number;
  process_cpu_share_of_one_core: number;
  host_cpu_busy_share: number;
}

export interface HarnessReport {
  /** `clean`: nothing over a threshold; `suspect`: see warnings. */
  state: 'clean' | 'suspect';
  warnings: HarnessWarning[];
  /** Per derived column: the processes whose warnings concern it (absent columns: none). */
  stages_flagged: Record<string, string[]>;
  /** Per node (its host URL): the processes whose warnings concern its numbers. */
  nodes_flagged: Record<string, string[]>;
  processes: HarnessProcess[];
  host_cpu: HostCpu | null;
  missing: string[];
  thresholds: HarnessThresholds;
}
