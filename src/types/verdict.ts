/**
 * Whether a run's offered load was sustainable (summary.json → `metrics.verdict`). Names are snake_case with their
 * units, like the columns users' scripts read. Times are seconds after the run's t0.
 */
export interface LoadVerdict {
  /** `stable`: completions kept up with arrivals; `saturated`: arrivals outran them; `unknown`: too little to judge. */
  state: 'stable' | 'saturated' | 'unknown';
  /** One line with the evidence, as the terminal prints it. */
  reason: string;
  evidence: LoadVerdictEvidence | null;
  thresholds: {
    fill_share: number;
    min_growth_share: number;
    min_growth_requests: number;
    min_growth_of_start_level: number;
  };
}

export interface LoadVerdictEvidence {
  /** The judged window: from the end of the fill (the first 20% of the arrival span) to the last arrival. */
  window_start_s: number;
  window_end_s: number;
  /** Requests offered per second in the window (null when every request was offered at one instant). */
  offered_rate_per_s: number | null;
  /** Requests that finished (succeeded or failed) per second in the window. */
  served_rate_per_s: number | null;
  served_to_offered_ratio: number | null;
  /** Least-squares trend of the number of requests in the system (offered, not finished) over the window. */
  in_system_growth_per_s: number | null;
  /** That trend times the window's length: how much the backlog grew. */
  in_system_growth_over_window: number | null;
  in_system_at_window_start: number;
  in_system_at_window_end: number;
  in_system_peak: number;
  /** Last finish − last arrival: how long the system took to empty once arrivals stopped. */
  drain_after_last_arrival_s: number | null;
  /** Sent requests that never finished (interrupted runs). */
  unfinished_requests: number;
}
