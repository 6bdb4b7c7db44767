import type { RequestRecord } from './record.js';
import type { RunEvent, RunNotice, TargetKind, TestLevel } from './run.js';
import type { EpochSeconds } from './time.js';

/** What a run is, as far as it is known when its directory has just been made. */
export interface JournalRunInfo {
  outputDirectory: string;
  runId: string;
  testLevel: TestLevel;
  target: TargetKind;
  requestRate: number;
  /** The resolved configuration, as config.json holds it. */
  config: Record<string, unknown>;
}

/**
 * Puts a run on disk while it runs, so that SIGKILL, a crash or a full disk keeps everything finished so far:
 * config.json when the run starts, each finished record appended to requests.jsonl (buffered, flushed often), and the
 * run's t0, events and notices in a provisional summary.json. `servelab report DIR` rebuilds the rest from these.
 * Nothing it does throws once it is open: a write that fails becomes a notice, and the run goes on.
 */
export interface RunJournal {
  /** The run directory exists: writes config.json and opens requests.jsonl. Throws when it cannot (nothing ran yet). */
  open(run: JournalRunInfo): Promise<void>;
  /** The measured schedule started at `t0` (epoch seconds): records are written as seconds after it from now on. */
  start(t0: EpochSeconds): void;
  /** A finished request (warmup records are ignored). Records finished before `start` are kept until it comes. */
  record(record: RequestRecord): void;
  notice(notice: RunNotice): void;
  event(event: RunEvent): void;
  /** Every notice so far, the journal's own (a write that failed) included. */
  readonly notices: readonly RunNotice[];
  /** Records written to requests.jsonl so far (flushed). */
  readonly recordsWritten: number;
  /** Why requests.jsonl stopped growing, when a write to it failed (a full disk, say): later records were kept in memory only. */
  readonly writeFailure: Error | undefined;
  /** Writes what is buffered and closes requests.jsonl. Safe to call twice. */
  close(): Promise<void>;
}
