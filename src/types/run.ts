import type { RequestRecord } from './record.js';
import type { EpochSeconds } from './time.js';

export type TestLevel = 'node' | 'routing';
export type TargetKind = 'sim' | 'sglang' | 'attach';
export type RunStatus = 'completed' | 'interrupted' | 'failed';

/** Something that happened to the system under test during a run (a node failure, a restore, a drain). */
export interface RunEvent {
  time: EpochSeconds;
  kind: string;
  /** Index of the node it concerns, when it concerns one. */
  node?: number;
  detail?: string;
}

/** Facts about a run that every reporter and the analysis need. */
export interface RunInfo {
  runId: string;
  testLevel: TestLevel;
  target: TargetKind;
  status: RunStatus;
  /** The run's origin `t0`: the instant the arrival schedule starts. File timestamps are seconds after it. */
  startTime: EpochSeconds;
  /** When the last request ended (or the run was interrupted). */
  endTime: EpochSeconds;
  /** Target arrival rate in requests per second (`Infinity` = all at once). */
  requestRate: number;
  /** True for virtual-time simulations: no real clock was involved. */
  simulated: boolean;
  servelabVersion: string;
}

/** Everything a run measured: what analysis and reporters consume. Warmup requests are not included. */
export interface RunData {
  info: RunInfo;
  /** The resolved configuration, written as `config.json`. */
  config: Record<string, unknown>;
  records: RequestRecord[];
  events: RunEvent[];
  /** Further measurements some runs have (the taps' overhead, scraped server metrics), keyed by what they are. */
  extras?: Record<string, unknown>;
}
