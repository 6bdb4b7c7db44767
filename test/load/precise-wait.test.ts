import { describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../../src/clock/clock.js';
import { PreciseWaiter } from '../../src/load/precise-wait.js';

describe('PreciseWaiter', () => {
  it.each([true, false])('never wakes before an instant and mostly wakes right at it (timer thread: %s)', async (timerThread) => {
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
      lagsMs.sort((a, b) => a - b);
      expect(lagsMs[30]).toBeLessThan(1);
      expect(waiter.tailMs).toBeGreaterThanOrEqual(0.1);
      expect(waiter.tailMs).toBeLessThanOrEqual(1.5);
    } finally {
      waiter.close();
    }
  });

  it('returns at once for an instant already past, and wakes promptly on abort', async () => {
    const controller = new AbortController();
    const waiter = new PreciseWaiter(systemClock, controller.signal);
    try {
      const startMs = systemClock.nowMs();
      await waiter.waitUntil(startMs - 5);
      expect(systemClock.nowMs() - startMs).toBeLessThan(5);
      setTimeout(() => controller.abort(), 30);
      await waiter.waitUntil(startMs + 10_000);
      expect(systemClock.nowMs() - startMs).toBeLessThan(500);
      await waiter.waitUntil(systemClock.nowMs() + 10_000); // aborted: no more waiting
      expect(systemClock.nowMs() - startMs).toBeLessThan(500);
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
    const withoutThread = new PreciseWaiter(systemClock, undefined, { timerThread: false });
    const startMs = systemClock.nowMs();
    await withoutThread.ready();
    expect(withoutThread.timerThreadRunning).toBe(false);
    const controller = new AbortController();
    const aborted = new PreciseWaiter(systemClock, controller.signal);
    try {
      controller.abort();
      await aborted.ready();
      expect(systemClock.nowMs() - startMs).toBeLessThan(500);
    } finally {
      aborted.close();
      withoutThread.close();
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
  it('keeps yielding to the event loop in its tail, so that whoever moves the clock can run', async () => {
    const clock = new ManualClock(0);
    const waiter = new PreciseWaiter(clock, undefined, { timerThread: false });
    try {
      let woke = false;
      const waiting = waiter.waitUntil(1).then(() => (woke = true)); // inside the tail at once (1 ms < 1.5 ms)
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
