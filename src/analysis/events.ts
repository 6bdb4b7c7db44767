import type { RequestRecord } from '../types/record.js';
import type { RunEvent } from '../types/run.js';
import type { EventImpact, WindowLoad } from '../types/summary.js';
import { recordsOfNode } from './node-index.js';
import { RECOVERY_RULE, recoveryBaselineProblem, timeToRecover } from './recovery.js';
import { stallsOfHang } from './server-stalls.js';
import { computeStatistics } from './statistics.js';

/** Seconds on each side of an event that its before/after comparison covers (cut at neighbouring events). */
export const EVENT_WINDOW_SECONDS = 10;
/**
 * Events closer than this are simultaneous (one schedule entry on several nodes is stamped node by node, a few
 * milliseconds apart): none of them cuts another's windows.
 */
export const SIMULTANEOUS_SECONDS = 1;

function windowLoad(records: readonly RequestRecord[], from: number, to: number): WindowLoad {
  const seconds = to - from;
  let completions = 0;
  let failures = 0;
  const ttfts: number[] = [];
  for (const record of records) {
    if (record.success) {
      if (record.finishTime !== undefined && record.finishTime >= from && record.finishTime < to) completions++;
      if (record.arrivalTime !== undefined && record.arrivalTime >= from && record.arrivalTime < to && record.firstTokenTime !== undefined) {
        ttfts.push(record.firstTokenTime - record.arrivalTime);
      }
    } else {
      const time = record.finishTime ?? record.arrivalTime;
      if (time !== undefined && time >= from && time < to) failures++;
    }
  }
  return {
    from,
    to,
    completionsPerSecond: seconds > 0 ? completions / seconds : 0,
    failuresPerSecond: seconds > 0 ? failures / seconds : 0,
    ttftP50: computeStatistics(ttfts)?.p50 ?? null,
  };
}

/** Failures (by failure time) in [from, to) and the last of them. */
function failuresIn(records: readonly RequestRecord[], from: number, to: number): { count: number; last: number | undefined } {
  let count = 0;
  let last: number | undefined;
  for (const record of records) {
    if (record.success) continue;
    const time = record.finishTime ?? record.arrivalTime;
    if (time === undefined || time < from || time >= to) continue;
    count++;
    if (last === undefined || time > last) last = time;
  }
  return { count, last };
}

export interface EventWindows {
  /** First arrival and last finish of the run. */
  windowStart: number;
  windowEnd: number;
  /** The run's origin (epoch seconds). */
  t0: number;
  /** End of the ramp-up (first arrival + 10% of the arrival period): no baseline reaches before it. */
  steadyStart: number;
  /** Server URL per node index (`extras.cluster.serverUrls`); without it events are analysed over the whole run. */
  nodeUrls?: readonly string[];
}

/**
 * Errors, throughput and TTFT before and after each event, and how long errors went on after it.
 *
 * An event on a node whose URL the run lists is analysed on that node's requests only (records whose `host`, the
 * server the router chose, is its URL): its failures, its before/after windows and its recovery. So two nodes crashed
 * at the same instant each get their own failures. Other events (or runs without the URL list) are analysed over the
 * whole run (`attribution: 'cluster'`).
 *
 * Windows: the baseline ("before") is at most EVENT_WINDOW_SECONDS before the event, cut at the previous event that is
 * not simultaneous with it, and never earlier than `steadyStart`: the ramp-up is no baseline. "After" is at most
 * EVENT_WINDOW_SECONDS, cut at the node's next event (cluster events: the next event not simultaneous) and at the last
 * finish. Failures are counted from the event to that same next event.
 */
export function describeEvents(records: readonly RequestRecord[], events: readonly RunEvent[], windows: EventWindows): EventImpact[] {
  const { windowStart, windowEnd, t0, steadyStart, nodeUrls } = windows;
  const sorted = [...events].sort((a, b) => a.time - b.time);
  const scoped = new Map<number, RequestRecord[]>();
  const recordsFor = (node: number, url: string): RequestRecord[] => {
    let found = scoped.get(node);
    if (found === undefined) scoped.set(node, (found = recordsOfNode(records, url)));
    return found;
  };
  return sorted.map((event) => {
    const url = event.node === undefined ? undefined : nodeUrls?.[event.node];
    const perNode = url !== undefined;
    const scope = perNode ? recordsFor(event.node as number, url) : records;
    const previous = sorted.filter((other) => other.time < event.time - SIMULTANEOUS_SECONDS).at(-1)?.time ?? Number.NEGATIVE_INFINITY;
    const next =
      sorted.find((other) => other !== event && (perNode ? other.node === event.node && other.time > event.time : other.time > event.time + SIMULTANEOUS_SECONDS))
        ?.time ?? Number.POSITIVE_INFINITY;
    const beforeFrom = Math.max(windowStart, steadyStart, previous, event.time - EVENT_WINDOW_SECONDS);
    const afterTo = Math.min(windowEnd, next, event.time + EVENT_WINDOW_SECONDS);
    const failures = failuresIn(scope, event.time, next);
    const impact: EventImpact = {
      time: event.time,
      timeSinceT0: Math.round((event.time - t0) * 1e6) / 1e6,
      kind: event.kind,
      attribution: perNode ? 'node' : 'cluster',
      before: windowLoad(scope, Math.min(beforeFrom, event.time), event.time),
      after: windowLoad(scope, event.time, Math.max(afterTo, event.time)),
      failuresUntilNextEvent: failures.count,
      errorsStoppedAfterSeconds: failures.last === undefined ? null : failures.last - event.time,
    };
    if (event.node !== undefined) impact.node = event.node;
    if (event.role !== undefined) impact.role = event.role;
    if (url !== undefined) impact.nodeUrl = url;
    if (perNode) {
      // Failures the client saw with no server named (refused by the router before it chose one) belong to no node.
      impact.unattributedFailures = failuresIn(
        records.filter((record) => record.host === undefined),
        event.time,
        next,
      ).count;
    }
    if (!(beforeFrom < event.time)) impact.baselineNote = 'no steady time before the event (it came during the ramp-up or right after another event): no baseline';
    if (event.kind === 'restore') {
      impact.recoverySeconds = timeToRecover(scope, sorted, event, windowEnd, steadyStart);
      impact.recoveryRule = RECOVERY_RULE;
      const problem = recoveryBaselineProblem(scope, sorted, event, steadyStart);
      if (problem !== undefined) impact.recoveryNote = problem;
    }
    if (event.kind === 'hang') {
      const stalls = stallsOfHang(scope, event.time, next);
      if (stalls !== undefined) impact.stalls = stalls;
    }
    return impact;
  });
}
