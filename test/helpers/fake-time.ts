import { vi } from 'vitest';
import type { Clock } from '../../src/clock/clock.js';

/**
 * Fake time for code that takes a Clock and sleeps on Node's timers (the load pacer, the closed loop, clients in
 * tests): vitest's fake timers own `setTimeout`, `setInterval` and `Date`, and `fakeTimeClock()` reads that fake `Date`.
 * `setImmediate` stays real on purpose: the pacer, on a clock that does not read `performance.now()`, yields turn by
 * turn for its last milliseconds and must see the clock move between turns (see src/load/precise-wait.ts).
 *
 * Time moves only through `driveFakeTime` (one step at a time, every timer due in a step fired at its own instant) or
 * `vi.setSystemTime` (a jump with no timer fired: a stalled event loop). Nothing here depends on how busy the machine is.
 */
export const FAKE_EPOCH_MS = 1_700_000_000_000;

const realSetImmediate = setImmediate;

export function useFakeTime(): void {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'], now: FAKE_EPOCH_MS });
}

export function useRealTime(): void {
  vi.useRealTimers();
}

/** A Clock on the fake `Date`: monotonic zero at FAKE_EPOCH_MS. Whole milliseconds, as fake `Date` counts them. */
export function fakeTimeClock(): Clock {
  return {
    nowMs: () => Date.now() - FAKE_EPOCH_MS,
    nowEpochSeconds: () => Date.now() / 1000,
    toEpochSeconds: (monotonicMs) => (FAKE_EPOCH_MS + monotonicMs) / 1000,
  };
}

/**
 * Moves fake time on by `stepMs` at a time, letting real turns of the event loop run between steps, until `pending`
 * settles; gives its value. A step limit turns a run that never ends into a failure instead of a hung test.
 */
export async function driveFakeTime<T>(pending: Promise<T>, options: { stepMs?: number; maxMs?: number } = {}): Promise<T> {
  const stepMs = options.stepMs ?? 1;
  const maxMs = options.maxMs ?? 60_000;
  let settled = false;
  pending.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let movedMs = 0; !settled; movedMs += stepMs) {
    if (movedMs > maxMs) throw new Error(`still running after ${maxMs} ms of fake time`);
    await new Promise<void>((resolve) => realSetImmediate(resolve));
    if (settled) break;
    await vi.advanceTimersByTimeAsync(stepMs);
  }
  return pending;
}
