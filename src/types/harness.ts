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
  /** What was over which threshold, e.g. "event-loop delay p99 3.20 ms > 1 ms": a cause to look at, not the grade. */
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
  /**
   * The grade: a metric is affected when the harness's error bound on it exceeds this share of its p50 (0.05 = 5%;
   * `harnessErrorShare`). The thresholds above only say which processes to name as causes.
   */
  metric_error_share: number;
}

/**
 * The harness's error bound on one metric, beside the metric. A timestamp taken or relayed late moves one request's
 * value by up to that lateness, so a metric's p50 moves by about the processes' typical (p50) lateness and its p99 by
 * their p99 lateness: each is weighed against its like.
 */
export interface HarnessErrorBound {
  /** The p99 lateness of every process on the metric's path, summed (ms): the bound on one request's value, and on the metric's p99. */
  boundMs: number;
  /** The same with each process's p50 lateness (ms): how far the metric's p50 can have moved. */
  p50BoundMs: number;
  /** The metric's p50 and p99 (ms); null when the run has no value for it (or it is 0: a stage the engine does not model). */
  valueMs: number | null;
  p99ValueMs: number | null;
  /** The larger of p50BoundMs / valueMs and boundMs / p99ValueMs; null without values. */
  share: number | null;
  /** The processes whose lateness makes up the bound. */
  sources: string[];
}

export interface HarnessReport {
  /**
   * `clean`: the error bound is within `metric_error_share` of every metric it affects; `affected`: it exceeds it on
   * the metrics named in `affected`, but not on TTFT or end-to-end latency; `suspect`: it exceeds it on TTFT or
   * end-to-end latency, so the run's headline numbers are within the harness's own error. Without metric values to
   * weigh against (assessHarness called alone), any threshold crossing is `suspect`.
   */
  state: 'clean' | 'affected' | 'suspect';
  /** The metrics (derived-column names, `itl`) whose bound exceeds the share, in column order. */
  affected: string[];
  /** Per metric the harness can move: its error bound, value and share. */
  errorBounds: Record<string, HarnessErrorBound>;
  warnings: HarnessWarning[];
  /** Per affected metric: the processes whose lateness makes up its bound (absent columns: not affected). */
  stages_flagged: Record<string, string[]>;
  /** Per node (its host URL), when the state is not clean: the processes behind an affected metric that concern its numbers. */
  nodes_flagged: Record<string, string[]>;
  processes: HarnessProcess[];
  host_cpu: HostCpu | null;
  missing: string[];
  thresholds: HarnessThresholds;
  /**
   * Requests servelab itself failed (`harness_limit`: its own file descriptors or memory), not the server: any makes
   * the run suspect, since its success rate and throughput then measure servelab too. Absent: none (or a summary.json
   * written before servelab counted them).
   */
  harnessLimitFailures?: number;
}
