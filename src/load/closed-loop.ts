import type { Clock } from '../clock/clock.js';
import type { ClosedLoopMode } from '../types/load.js';
import type { Milliseconds } from '../types/time.js';
import { totalStageDurationS, usersAt } from './concurrency-stages.js';

export interface ClosedLoopOptions {
  clock: Clock;
  mode: ClosedLoopMode;
  /** The schedule origin `t0` on the clock's monotonic scale (stages count from it). */
  t0Ms: Milliseconds;
  requestCount: number;
  /** Sends request `index` now; resolves when it has finished and its record is kept. */
  send: (index: number) => Promise<void>;
  signal: AbortSignal;
  isAborted: () => boolean;
}

/**
 * Closed loop: each user sends, waits for the answer, thinks, and sends the next request until none remain. With
 * stages, a ticker sets how many users are active; users above that count pause after their current request.
 */
export async function runClosedLoop(options: ClosedLoopOptions): Promise<void> {
  const { clock, mode, t0Ms, requestCount, send, signal, isAborted } = options;
  const thinkTimeMs = mode.thinkTimeMs ?? 0;
  const stages = mode.stages;
  const userCount = Math.min(stages === undefined ? mode.concurrency : Math.max(...stages.map((stage) => stage.concurrency)), requestCount);
  const endMs = stages === undefined ? Infinity : t0Ms + totalStageDurationS(stages) * 1000;
  const activeUsers = (): number => (stages === undefined ? userCount : usersAt(stages, (clock.nowMs() - t0Ms) / 1000));
  const pausedUsers = new Map<number, () => void>();
  const wakeActive = (): void => {
    const active = clock.nowMs() >= endMs || isAborted() ? userCount : activeUsers();
    for (const [user, wake] of pausedUsers) {
      if (user < active) {
        pausedUsers.delete(user);
        wake();
      }
    }
  };
  // Stage changes are checked every 10 ms: finer than any sensible stage, coarse enough to cost nothing.
  const ticker = stages === undefined ? undefined : setInterval(wakeActive, 10);
  const onAbort = (): void => wakeActive();
  signal.addEventListener('abort', onAbort, { once: true });
  let next = 0;
  const runUser = async (user: number): Promise<void> => {
    let firstRequest = true;
    while (!isAborted() && next < requestCount && clock.nowMs() < endMs) {
      if (user >= activeUsers()) {
        await new Promise<void>((resolve) => pausedUsers.set(user, resolve));
        firstRequest = true;
        continue;
      }
      if (!firstRequest && thinkTimeMs > 0) {
        // Each user sleeps on its own timer; think times are long next to timer error, so no precise wait is needed.
        await sleepUnlessAborted(thinkTimeMs, signal);
        if (isAborted() || clock.nowMs() >= endMs) return;
      }
      firstRequest = false;
      const index = next++;
      if (index >= requestCount) return;
      await send(index);
    }
  };
  try {
    await Promise.all(Array.from({ length: userCount }, (_, user) => runUser(user)));
  } finally {
    if (ticker !== undefined) clearInterval(ticker);
    signal.removeEventListener('abort', onAbort);
  }
}

/** Sleeps on Node's timers; an abort ends the sleep at once. */
export function sleepUnlessAborted(durationMs: Milliseconds, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(finish, durationMs);
    function finish(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', finish);
      resolve();
    }
    signal.addEventListener('abort', finish, { once: true });
  });
}
