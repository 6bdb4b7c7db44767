import type { ClockOffsetEstimate } from './clock-offset.js';
import type { RequestRecord } from './record.js';
import type { EpochSeconds } from './time.js';

export type TestLevel = 'node' | 'routing';
/** A builtin target's name, or the module path of a target launcher (docs/placement.md). */
export type TargetKind = 'sim' | 'sglang' | 'attach' | (string & {});
export type RunStatus = 'completed' | 'interrupted' | 'failed';

/** Something that happened to the system under test during a run (a node failure, a restore, a drain). */
export interface RunEvent {
  time: EpochSeconds;
  kind: string;
  /** Index of the node it concerns, when it concerns one. */
  node?: number;
  /**
   * Prefill/decode disaggregation: the role of the node it concerns (the first `numPrefill` nodes prefill, the rest
   * decode). Absent in a co-located run.
   */
  role?: PdRole;
  detail?: string;
}

/** A server's side of a prefill/decode disaggregated cluster. */
export type PdRole = 'prefill' | 'decode';

/**
 * Something beside the client that did not work during a run (the taps, the metrics scraper, the failure executor, a
 * reporter, the disk, a launched process that died): the run goes on, and its records keep what the client measured.
 */
export interface RunNotice {
  /** What failed: `taps`, `scraper`, `failures`, `reporter:<name>`, `disk`, `process:<name>`, `recovery`. */
  source: string;
  message: string;
  /** When it happened, when that is known. */
  time?: EpochSeconds;
}

/** What `servelab report DIR` could rebuild of a run that did not finish writing its files (SIGKILL, a crash, a full disk). */
export interface RecoveryInfo {
  /** Records read back from requests.jsonl. */
  records: number;
  /** Lines that were not whole JSON records (a torn last line) and were dropped. */
  droppedLines: number;
  /** False when summary.json was missing: the run's t0 is then unknown, and times stay relative to it. */
  t0Known: boolean;
  /** The files the run had not written (summary.json: only its provisional one), written again from the records. */
  missingFiles: string[];
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
  /**
   * The records analysis and the tables read: server instants are on the client's clock where a clock offset was
   * estimated and corrected (see `clockOffsets`).
   */
  records: RequestRecord[];
  /** The records as measured, when `records` holds corrected copies: what requests.jsonl keeps. */
  rawRecords?: RequestRecord[];
  /** Each server's clock offset against the client's, estimated from the requests (absent in virtual time). */
  clockOffsets?: ClockOffsetEstimate[];
  events: RunEvent[];
  /** Further measurements some runs have (the taps' overhead, scraped server metrics), keyed by what they are. */
  extras?: Record<string, unknown>;
  /** What failed beside the client (see RunNotice); absent when nothing did. */
  notices?: RunNotice[];
  /** Present when the run was rebuilt from an incomplete run directory. */
  recovered?: RecoveryInfo;
}
