import type { Clock } from '../clock/clock.js';
import type { Milliseconds } from '../types/time.js';
import type { PreciseWaiter } from './precise-wait.js';

/**
 * Most requests released in one turn of the event loop when many are due at once (an infinite rate, or catching up
 * after a stall): between batches the loop yields so that the requests already sent can write their bytes.
 */
const MAX_RELEASE_BATCH = 128;

export interface OpenLoopOptions {
  clock: Clock;
  /** The schedule origin `t0` on the clock's monotonic scale. */
  t0Ms: Milliseconds;
  /** One instant per request, in milliseconds after `t0`, non-decreasing. */
  arrivalOffsetsMs: Float64Array;
  waiter: PreciseWaiter;
  /** Request `index`'s instant has come: hand it on (it is due at `scheduledMs`, perhaps a little before now). */
  arrive: (index: number, scheduledMs: Milliseconds) => void;
  isAborted: () => boolean;
}

/**
 * The open loop's pacer: request i is released at its absolute instant `t0 + arrivalOffsetsMs[i]`, whatever is still
 * in flight. The waiter is handed the whole schedule at once (its timer thread walks it without being woken by this
 * thread), and there is one wake-up per batch: the waiter sleeps until the next instant, and on waking every request due by then
 * goes out at once, each with its own scheduled instant, so a late wake-up (or a stall) makes sends late but never
 * shifts the schedule: each instant comes from the schedule, never from the previous send.
 */
export async function runOpenLoop(options: OpenLoopOptions): Promise<void> {
  const { clock, t0Ms, arrivalOffsetsMs, waiter, arrive, isAborted } = options;
  const count = arrivalOffsetsMs.length;
  waiter.follow(t0Ms, arrivalOffsetsMs);
  let next = 0;
  while (next < count && !isAborted()) {
    const targetMs = t0Ms + (arrivalOffsetsMs[next] as number);
    let nowMs = clock.nowMs();
    if (nowMs < targetMs) {
      await waiter.waitForInstant(next);
      if (isAborted()) return;
      nowMs = clock.nowMs();
      // An abort (or a clock that moved less than asked) can end the wait early: nothing is ever sent early.
      if (nowMs < targetMs) continue;
    }
    let released = 0;
    while (next < count && released < MAX_RELEASE_BATCH) {
      const scheduledMs = t0Ms + (arrivalOffsetsMs[next] as number);
      if (scheduledMs > nowMs) {
        // Sending takes time: requests that came due meanwhile go in this batch too.
        nowMs = clock.nowMs();
        if (scheduledMs > nowMs) break;
      }
      arrive(next, scheduledMs);
      next++;
      released++;
    }
    if (released === MAX_RELEASE_BATCH) await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
