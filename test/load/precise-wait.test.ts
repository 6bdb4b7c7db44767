import { afterEach, describe, expect, it } from 'vitest';
import { anchoredSystemClock, ManualClock, systemClock } from '../../src/clock/clock.js';
import { PreciseWaiter } from '../../src/load/precise-wait.js';
import { driveFakeTime, fakeTimeClock, useFakeTime, useRealTime } from '../helpers/fake-time.js';

afterEach(useRealTime);

describe('PreciseWaiter', () => {
  // How soon after the instant it wakes is a wall-clock figure: bench/node-cli-targets.ts and bench/load-precision.ts
  // measure it; a test only holds what must be true on any machine, however busy.
  it.each([true, false])('never wakes before an instant (timer thread: %s)', async (timerThread) => {
    const waiter = new PreciseWaiter(systemClock, undefined, { timerThread });
    try {
      // Let the thread start (tens of milliseconds; longer on a busy machine).
      for (let attempt = 0; attempt < 100 && waiter.usesTimerThread !== timerThread; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(waiter.usesTimerThread).toBe(timerThread);
      const originMs = systemClock.nowMs() + 2;
      const lagsMs: number[] = [];
      for (let index = 0; index < 60; index++) {
        const targetMs = originMs + index * 2.7;
        await waiter.waitUntil(targetMs);
        lagsMs.push(systemClock.nowMs() - targetMs);
      }
      expect(Math.min(...lagsMs)).toBeGreaterThanOrEqual(0);
    } finally {
      waiter.close();
    }
  });

  it.each([true, false])('follows a schedule instant by instant, never waking before one (timer thread: %s)', async (timerThread) => {
    const waiter = new PreciseWaiter(systemClock, undefined, { timerThread });
    try {
      await waiter.ready();
      expect(waiter.timerThreadRunning).toBe(timerThread);
      // Gaps of 0 (instants due together), under the spin threshold, and of a few milliseconds.
      const offsetsMs = Float64Array.from([0, 0, 0.01, 1.3, 4, 4, 4.02, 9.5, 12]);
      const originMs = systemClock.nowMs() + 2;
      waiter.follow(originMs, offsetsMs);
      for (let index = 0; index < offsetsMs.length; index++) {
        await waiter.waitForInstant(index);
        expect(systemClock.nowMs()).toBeGreaterThanOrEqual(originMs + (offsetsMs[index] as number));
      }
    } finally {
      waiter.close();
    }
  });

  // On fake time (test/helpers/fake-time.ts): the driver moves the clock only while the wait is pending, so the time
  // that passed is exactly how long the waiter waited.
  it('returns at once for an instant already past, and wakes on abort, not at the instant', async () => {
    useFakeTime();
    const clock = fakeTimeClock();
    const controller = new AbortController();
    const waiter = new PreciseWaiter(clock, controller.signal);
    try {
      const startMs = clock.nowMs();
      await driveFakeTime(waiter.waitUntil(startMs - 5));
      expect(clock.nowMs() - startMs).toBe(0);
      setTimeout(() => controller.abort(), 30);
      await driveFakeTime(waiter.waitUntil(startMs + 10_000));
      expect(clock.nowMs() - startMs).toBe(30);
      await driveFakeTime(waiter.waitUntil(clock.nowMs() + 10_000)); // aborted: no more waiting
      expect(clock.nowMs() - startMs).toBe(30);
    } finally {
      waiter.close();
    }
  });

  it('ready() resolves once the timer thread runs, at once without one, and promptly on abort', async () => {
    const waiter = new PreciseWaiter(systemClock);
    try {
      expect(waiter.timerThreadRunning).toBe(false); // starting a thread takes tens of milliseconds
      await waiter.ready();
      expect(waiter.timerThreadRunning).toBe(true);
    } finally {
      waiter.close();
    }
    // Fake timers from here: ready()'s one-second limit cannot fire unless the driver moves time, so a ready() that
    // waited for it (instead of resolving at once) shows as fake time passed.
    useFakeTime();
    const clock = fakeTimeClock();
    const withoutThread = new PreciseWaiter(systemClock, undefined, { timerThread: false });
    const startMs = clock.nowMs();
    await driveFakeTime(withoutThread.ready());
    expect(withoutThread.timerThreadRunning).toBe(false);
    const controller = new AbortController();
    const aborted = new PreciseWaiter(systemClock, controller.signal);
    try {
      controller.abort();
      await driveFakeTime(aborted.ready());
      expect(clock.nowMs() - startMs).toBe(0);
    } finally {
      aborted.close();
      withoutThread.close();
    }
  });

  it('uses the timer thread with every clock that reads performance.now() (a run anchors its own), and not with a manual one', () => {
    const waiters = [new PreciseWaiter(systemClock), new PreciseWaiter(anchoredSystemClock()), new PreciseWaiter(new ManualClock(0))];
    try {
      expect(waiters.map((waiter) => waiter.usesTimerThread)).toEqual([true, true, false]);
    } finally {
      for (const waiter of waiters) waiter.close();
    }
  });

  it('falls back to timers after close', async () => {
    const waiter = new PreciseWaiter(systemClock);
    waiter.close();
    expect(waiter.usesTimerThread).toBe(false);
    const targetMs = systemClock.nowMs() + 20;
    await waiter.waitUntil(targetMs);
    expect(systemClock.nowMs()).toBeGreaterThanOrEqual(targetMs);
  });
});

describe('PreciseWaiter on a manual clock', () => {
  it('keeps yielding to the event loop for the last milliseconds, so that whoever moves the clock can run', async () => {
    const clock = new ManualClock(0);
    const waiter = new PreciseWaiter(clock, undefined, { timerThread: false });
    try {
      let woke = false;
      const waiting = waiter.waitUntil(1).then(() => (woke = true)); // under 2 ms: yields turn by turn
      await new Promise((resolve) => setImmediate(resolve));
      expect(woke).toBe(false);
      clock.advanceBy(1);
      await waiting;
      expect(woke).toBe(true);
    } finally {
      waiter.close();
    }
  });
});
