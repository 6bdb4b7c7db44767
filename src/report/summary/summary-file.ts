import type { RunData, RunEvent, RunInfo } from '../../types/run.js';
import type { Summary } from '../../types/summary.js';
import { roundToMicroseconds } from '../relative-time.js';

export const SUMMARY_JSON = 'summary.json';
/** Bumped when summary.json changes incompatibly; `servelab report` refuses other versions with a clear message. */
export const SUMMARY_FORMAT_VERSION = 1;

/** An event as written: `time` in seconds after t0. */
export interface SummaryFileEvent extends Omit<RunEvent, 'time'> {
  time: number;
}

/** The content of summary.json. Run times are epoch seconds; event times are seconds after `t0`. */
export interface SummaryFile {
  format: 'servelab-summary';
  formatVersion: number;
  run: RunInfo & { t0: number };
  events: SummaryFileEvent[];
  metrics: Summary;
  /** Further measurements of the run (tap overhead, ...), as the orchestrator gave them. */
  extras?: Record<string, unknown>;
}

export function buildSummaryFile(run: RunData, summary: Summary): SummaryFile {
  return {
    format: 'servelab-summary',
    formatVersion: SUMMARY_FORMAT_VERSION,
    run: { ...run.info, t0: run.info.startTime },
    events: run.events.map((event) => ({ ...event, time: roundToMicroseconds(event.time - run.info.startTime) })),
    metrics: summary,
    ...(run.extras === undefined ? {} : { extras: run.extras }),
  };
}
