import type { RequestRecord } from '../types/record.js';
import type { RunData } from '../types/run.js';
import type { Statistics } from '../types/summary.js';
import { nodeUrlsOf, normalizeUrl } from './node-index.js';
import { computeStatistics } from './statistics.js';

/** When a server was stopped: from a `hang` event to the same node's next `restore` (or the end of the run). */
interface StoppedInterval {
  from: number;
  to: number;
}

/**
 * Each node's stopped intervals, by server URL. A hang is SIGSTOP: the kernel still accepts connections and buffers
 * the request, and the server stamps its receipt (`request_received_ts`) only when it resumes.
 */
function stoppedIntervalsByUrl(run: Pick<RunData, 'events' | 'extras'>): Map<string, StoppedInterval[]> {
  const byUrl = new Map<string, StoppedInterval[]>();
  const urls = nodeUrlsOf(run);
  if (urls === undefined) return byUrl;
  const sorted = [...run.events].sort((a, b) => a.time - b.time);
  for (const event of sorted) {
    if (event.kind !== 'hang' || event.node === undefined) continue;
    const url = urls[event.node];
    if (url === undefined) continue;
    const restore = sorted.find((other) => other.kind === 'restore' && other.time >= event.time && (other.node === undefined || other.node === event.node));
    const intervals = byUrl.get(url) ?? [];
    intervals.push({ from: event.time, to: restore?.time ?? Number.POSITIVE_INFINITY });
    byUrl.set(url, intervals);
  }
  return byUrl;
}

/** Seconds of [start, end] inside the stopped intervals. */
function overlapSeconds(start: number, end: number, intervals: readonly StoppedInterval[]): number {
  let seconds = 0;
  for (const interval of intervals) seconds += Math.max(0, Math.min(end, interval.to) - Math.max(start, interval.from));
  return seconds;
}

/**
 * The run with `serverStallSeconds` set on every request that waited for a hung server between its send and the
 * server's receipt (or its end, when the server never stamped one). Records that did not wait are the same objects;
 * those that did are copies, so the measured records are never changed. Without hang events, the run as it is.
 */
export function attributeServerStalls(run: RunData): RunData {
  const byUrl = stoppedIntervalsByUrl(run);
  if (byUrl.size === 0) return run;
  let changed = false;
  const records = run.records.map((record) => {
    const intervals = record.host === undefined ? undefined : byUrl.get(normalizeUrl(record.host));
    const start = record.routerSendTime;
    const end = record.serverCreatedTime ?? record.finishTime;
    if (intervals === undefined || start === undefined || end === undefined) return record;
    const stall = overlapSeconds(start, end, intervals);
    if (!(stall > 0)) return record;
    changed = true;
    return { ...record, serverStallSeconds: stall };
  });
  return changed ? { ...run, records } : run;
}

/** A hang event's stalled requests (sent before its node's next event, still waiting after the hang began). */
export function stallsOfHang(records: readonly RequestRecord[], hangTime: number, nextEventTime: number): { requests: number; stallSeconds: Statistics } | undefined {
  const stalls: number[] = [];
  for (const record of records) {
    const stall = record.serverStallSeconds;
    if (stall === undefined || !(stall > 0) || record.routerSendTime === undefined || record.routerSendTime >= nextEventTime) continue;
    if ((record.serverCreatedTime ?? record.finishTime ?? Number.POSITIVE_INFINITY) <= hangTime) continue;
    stalls.push(stall);
  }
  const stallSeconds = computeStatistics(stalls);
  return stallSeconds === null ? undefined : { requests: stalls.length, stallSeconds };
}
