import type { Clock } from '../clock/clock.js';
import type { ProcessPlacement } from '../types/cluster.js';
import type { LoadResult } from '../types/load.js';
import type { RunJournal } from '../types/run-journal.js';
import type { RunEvent, RunNotice, TargetKind, TestLevel } from '../types/run.js';
import type { ProgressListener } from './progress.js';

export interface RunOptions {
  /** Aborting interrupts the run: sending stops, in-flight requests end as `aborted`, and what was measured is written. */
  signal?: AbortSignal;
  onProgress?: ProgressListener;
  /** The clock for every client-side reading; the real one unless a test injects another. */
  clock?: Clock;
  /** Puts config.json and each finished record on disk as the run goes (see RunJournal). */
  journal?: RunJournal;
  /** Where the servers, router and taps run; this host's process groups (localPlacement) unless given. */
  placement?: ProcessPlacement;
  /**
   * The nodes the launched servers run on, by name, as the placement knows them: server i of a routing test runs on
   * `serverNodes[i % length]`, a node test's server on the first. Absent: the placement's default node.
   */
  serverNodes?: readonly string[];
  /**
   * The nodes the load-generator processes run on with `clientNodes` > 1: generator i on `clientNodes[i % length]`.
   * Absent: the placement's default node (a Slurm placement fills it from its allocation).
   */
  clientNodes?: readonly string[];
}

/** Everything a test measured, before analysis and reporters turn it into files. */
export interface MeasuredRun {
  runId: string;
  outputDirectory: string;
  testLevel: TestLevel;
  target: TargetKind;
  requestRate: number;
  /** The resolved configuration as it is written to `config.json`. */
  config: Record<string, unknown>;
  load: LoadResult;
  events: RunEvent[];
  slo?: { ttftMs?: number; tpotMs?: number; totalMs?: number };
  /** True for virtual-time simulations. */
  simulated?: boolean;
  /** Further measurements (the taps' overhead, ...), keyed by what they are. */
  extras?: Record<string, unknown>;
  /** What failed beside the client during the run (taps, scraper, a launched process, ...). */
  notices?: RunNotice[];
  /** The journal the run wrote to, to be closed before the files are written. */
  journal?: RunJournal;
}
