import type { RecoveryInfo, RunData, RunEvent, RunInfo, RunNotice } from '../../types/run.js';
import type { Summary } from '../../types/summary.js';
import { roundToMicroseconds } from '../relative-time.js';
import { fromFormat2Names, toFormat2Names } from './summary-names.js';

export const SUMMARY_JSON = 'summary.json';
/**
 * Bumped when summary.json changes incompatibly. 2: every name camelCase with its unit (summary-names.ts; the v1 → v2
 * table is in docs/metrics.md). servelab reads versions 1 and 2 and refuses others with a clear message.
 */
export const SUMMARY_FORMAT_VERSION = 2;
/** The versions `readSummaryFile` understands. */
export const READABLE_SUMMARY_FORMAT_VERSIONS: readonly number[] = [1, 2];

/** An event as written: `time` in seconds after t0. */
export interface SummaryFileEvent extends Omit<RunEvent, 'time'> {
  time: number;
}

/** A notice as written: `atS` in seconds after t0, when its time is known. */
export interface SummaryFileNotice {
  source: string;
  message: string;
  atS?: number;
}

export function noticesToFile(notices: readonly RunNotice[], t0: number): SummaryFileNotice[] {
  return notices.map(({ time, ...rest }) => ({ ...rest, ...(time === undefined ? {} : { atS: roundToMicroseconds(time - t0) }) }));
}

export function noticesFromFile(notices: readonly SummaryFileNotice[], t0: number): RunNotice[] {
  return notices.map(({ atS, ...rest }) => ({ ...rest, ...(typeof atS === 'number' ? { time: atS + t0 } : {}) }));
}

/**
 * The content of summary.json with format 1's names, which are the in-memory names (`Summary`, `RunInfo`). Run times
 * are epoch seconds; event times are seconds after `t0`. `encodeSummaryFile` gives the names written (format 2).
 */
export interface SummaryFile {
  format: 'servelab-summary';
  formatVersion: number;
  run: RunInfo & { t0: number };
  events: SummaryFileEvent[];
  metrics: Summary;
  /** Further measurements of the run (tap overhead, ...), as the orchestrator gave them. */
  extras?: Record<string, unknown>;
  /** What failed beside the client (taps, scraper, a launched process, a reporter, the disk); absent when nothing did. */
  notices?: SummaryFileNotice[];
  /** Present when `servelab report` rebuilt the run from an incomplete directory: how much it recovered. */
  recovered?: RecoveryInfo;
  /** Only in the summary.json a run writes at t0 and replaces when it finishes; its `run.status` is then `running`. */
  provisional?: boolean;
}

export function buildSummaryFile(run: RunData, summary: Summary): SummaryFile {
  return {
    format: 'servelab-summary',
    formatVersion: SUMMARY_FORMAT_VERSION,
    run: { ...run.info, t0: run.info.startTime },
    events: run.events.map((event) => ({ ...event, time: roundToMicroseconds(event.time - run.info.startTime) })),
    metrics: summary,
    ...(run.extras === undefined ? {} : { extras: run.extras }),
    ...(run.notices === undefined || run.notices.length === 0 ? {} : { notices: noticesToFile(run.notices, run.info.startTime) }),
    ...(run.recovered === undefined ? {} : { recovered: run.recovered }),
  };
}

/** What summary.json holds: the file with format 2's names (camelCase, units in names), ready for `toJson`. */
export function encodeSummaryFile(file: SummaryFile | (Omit<SummaryFile, 'metrics' | 'run'> & { run: object })): Record<string, unknown> {
  return toFormat2Names({ ...file, formatVersion: SUMMARY_FORMAT_VERSION });
}

/**
 * A parsed summary.json (format 1 or 2) with the in-memory names; `formatVersion` keeps the version it was written
 * in. Anything else (not a servelab summary, another version) is returned as it is for the caller to refuse.
 */
export function decodeSummaryFile(parsed: unknown): SummaryFile {
  const file = parsed as Partial<SummaryFile> | null;
  if (file?.format !== 'servelab-summary' || file.formatVersion !== 2) return parsed as SummaryFile;
  return fromFormat2Names(file) as unknown as SummaryFile;
}
