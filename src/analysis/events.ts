import type { RequestRecord } from '../types/record.js';
import type { RunEvent } from '../types/run.js';
import type { EventImpact, WindowLoad } from '../types/summary.js';
import { timeToRecover } from './recovery.js';
import { computeStatistics } from './statistics.js';

/** Seconds on each side of an event that its before/after comparison covers (cut at neighbouring events). */
export const EVENT_WINDOW_SECONDS = 10;

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

/**
 * Errors, throughput and TTFT before and after each event, and how long errors went on after it. Windows span
 * EVENT_WINDOW_SECONDS on each side, cut at the neighbouring events and at the first arrival / last finish. Times are
 * epoch seconds; `t0` (the run's origin) gives each impact its `timeSinceT0`.
 */
export function describeEvents(
  records: readonly RequestRecord[],
  events: readonly RunEvent[],
  windowStart: number,
  windowEnd: number,
  t0: number,
): EventImpact[] {
  const sorted = [...events].sort((a, b) => a.time - b.time);
  return sorted.map((event, index) => {
    const previous = index > 0 ? (sorted[index - 1] as RunEvent).time : Number.NEGATIVE_INFINITY;
    const next = index + 1 < sorted.length ? (sorted[index + 1] as RunEvent).time : Number.POSITIVE_INFINITY;
    const beforeFrom = Math.max(windowStart, previous, event.time - EVENT_WINDOW_SECONDS);
    const afterTo = Math.min(windowEnd, next, event.time + EVENT_WINDOW_SECONDS);
    let failuresUntilNextEvent = 0;
    let lastFailure: number | undefined;
    for (const record of records) {
      if (record.success) continue;
      const time = record.finishTime ?? record.arrivalTime;
      if (time === undefined || time < event.time || time >= next) continue;
      failuresUntilNextEvent++;
      if (lastFailure === undefined || time > lastFailure) lastFailure = time;
    }
    const impact: EventImpact = {
      time: event.time,
      timeSinceT0: Math.round((event.time - t0) * 1e6) / 1e6,
      kind: event.kind,
      before: windowLoad(records, Math.min(beforeFrom, event.time), event.time),
      after: windowLoad(records, event.time, Math.max(afterTo, event.time)),
      failuresUntilNextEvent,
      errorsStoppedAfterSeconds: lastFailure === undefined ? null : lastFailure - event.time,
    };
    if (event.node !== undefined) impact.node = event.node;
    if (event.kind === 'restore') impact.recoverySeconds = timeToRecover(records, sorted, event, windowEnd);
    return impact;
  });
}
