import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Clock } from '../types/clock.js';
import type { EpochSeconds, Milliseconds } from '../types/time.js';

export type { Clock } from '../types/clock.js';

/** An epoch anchor and how tightly it was bracketed (its error is at most half the width). */
export interface EpochAnchorMeasurement {
  /** Epoch milliseconds at `performance.now()` zero. */
  anchorMs: number;
  /** The width of the tightest bracket of a `Date.now()` tick seen, ms. */
  widthMs: number;
}

/**
 * Epoch milliseconds at `performance.now()` zero, measured now.
 *
 * `Date.now()` is the wall clock but counts whole milliseconds, so the anchor is taken where it ticks over. Each
 * `Date.now()` read sits between two `performance.now()` reads; when it shows a new millisecond, the tick fell after
 * the previous read's opening and before this read's closing reading, and those two bound it whatever was preempted
 * in between (a preemption only widens the bracket, where it shows and is discarded). An earlier version bounded
 * the tick by the monotonic reads alone, before each `Date.now()`: a preemption between the two reads left the
 * bracket tight and the anchor wrong by the preemption (0.3–11 ms seen on a loaded 2-core machine).
 * The tightest of a few brackets fixes the anchor to microseconds on a quiet machine; on a loaded one it looks for a
 * bracket under half a millisecond for at most ~60 ms.
 */
export function measureEpochAnchor(): EpochAnchorMeasurement {
  let best: EpochAnchorMeasurement = { anchorMs: Date.now() - performance.now(), widthMs: Infinity };
  const searchEndMs = performance.now() + 60;
  for (let edge = 0; edge < 50 && best.widthMs > (edge < 5 ? 0.02 : 0.5) && (edge < 5 || performance.now() < searchEndMs); edge++) {
    let openedMs = performance.now();
    const startWallMs = Date.now();
    const giveUpMs = openedMs + 3;
    for (;;) {
      const beforeMs = performance.now();
      const wallMs = Date.now();
      const afterMs = performance.now();
      if (wallMs !== startWallMs) {
        // Date.now() turned to wallMs after the previous read began (openedMs) and before this one ended (afterMs).
        if (afterMs - openedMs < best.widthMs) best = { anchorMs: wallMs - (openedMs + afterMs) / 2, widthMs: afterMs - openedMs };
        break;
      }
      if (afterMs > giveUpMs) break;
      openedMs = beforeMs;
    }
  }
  return best;
}

/** Epoch milliseconds at `performance.now()` zero, measured now (see measureEpochAnchor). */
export function measureEpochAnchorMs(): number {
  return measureEpochAnchor().anchorMs;
}

/** The clocks whose `nowMs()` is `performance.now()` (see readsPerformanceNow). */
const performanceClocks = new WeakSet<Clock>();

/** The host anchor each real clock was made from, as CLOCK_ANCHOR_ENV writes it (see clockAnchorOf). */
const clockAnchors = new WeakMap<Clock, string>();

/** A real clock on the host anchor `hostAnchorMs` (epoch ms at host-monotonic zero). */
function clockOnHostAnchor(anchorMs: number): Clock {
  const epochAtMonotonicZeroMs = anchorMs + performanceOriginMs;
  const clock: Clock = {
    nowMs: () => performance.now(),
    nowEpochSeconds: () => (epochAtMonotonicZeroMs + performance.now()) / 1000,
    toEpochSeconds: (monotonicMs) => (epochAtMonotonicZeroMs + monotonicMs) / 1000,
  };
  performanceClocks.add(clock);
  clockAnchors.set(clock, anchorText(anchorMs));
  return clock;
}

/**
 * The host anchor a real clock stamps on (`<boot id> <epoch ms at host-monotonic zero>`), or undefined for any other
 * clock: two clocks with the same anchor, in any processes, read the same epoch at the same instant, exactly.
 */
export function clockAnchorOf(clock: Clock): string | undefined {
  return clockAnchors.get(clock);
}

/**
 * Whether the clock's monotonic readings are `performance.now()` (the system clock, and every run's anchored clock):
 * then another thread can wait for its instants on its own `performance.now()` (the pacer's timer thread does).
 */
export function readsPerformanceNow(clock: Clock): boolean {
  return performanceClocks.has(clock);
}

/**
 * The variable that carries this process's host anchor to the processes and threads it starts on the same host:
 * `<boot id> <epoch ms at host-monotonic zero>`.
 *
 * Why: each process measuring its own epoch anchor (measureEpochAnchor) agrees with its neighbours to a microsecond
 * when its brackets are tight, but under load a process may find none tight in its ~60 ms search, and before the
 * bracket was fixed two processes of one host disagreed by 0.3–11 ms (a tap's router-send stamp before the client's
 * arrival stamp in a routing test). Every process of one host reads the same monotonic clock
 * (`process.hrtime`, CLOCK_MONOTONIC on Linux), so one anchor measured once and handed down makes all their epoch
 * readings agree exactly; only the anchor's own error against the wall clock remains, and it is shared.
 */
export const CLOCK_ANCHOR_ENV = 'SERVELAB_CLOCK_ANCHOR';

/** Reads identifying this boot of this host: a monotonic clock is only shared within one. */
function hostBootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return `host:${hostname()}`;
  }
}

const bootId = hostBootId();

/** `process.hrtime` (the host's monotonic clock) minus `performance.now()`, in ms: a constant of this thread. */
function performanceOriginOnHostMs(): number {
  let bestWidthMs = Infinity;
  let originMs = 0;
  for (let attempt = 0; attempt < 20; attempt++) {
    const beforeMs = performance.now();
    const hostMs = Number(process.hrtime.bigint()) / 1e6;
    const afterMs = performance.now();
    if (afterMs - beforeMs < bestWidthMs) {
      bestWidthMs = afterMs - beforeMs;
      originMs = hostMs - (beforeMs + afterMs) / 2;
    }
  }
  return originMs;
}

const performanceOriginMs = performanceOriginOnHostMs();

/** The inherited host anchor, when the variable holds one of this boot of this host. */
function inheritedHostAnchorMs(): number | undefined {
  const value = process.env[CLOCK_ANCHOR_ENV];
  if (value === undefined || value === '') return undefined;
  const [id, anchor] = value.split(' ');
  const anchorMs = Number(anchor);
  return id === bootId && Number.isFinite(anchorMs) ? anchorMs : undefined;
}

/** Epoch ms at host-monotonic zero: inherited from the process that started this one, or measured here. */
let hostAnchorMs = inheritedHostAnchorMs() ?? measureEpochAnchorMs() - performanceOriginMs;

/**
 * A fresh measurement that differs from the anchor in use by more than this (beyond its own bracket) means the wall
 * clock was stepped (by NTP or by hand) and the new anchor is taken; less is the two measurements' own error, and the
 * anchor in use is kept so that what this process started keeps agreeing with it. (NTP slews both the wall and the
 * monotonic clock alike; only a step moves one against the other.)
 */
const WALL_CLOCK_STEP_MS = 2;

/** The variable (CLOCK_ANCHOR_ENV) for a process or thread started on this host now. */
export function clockAnchorEnv(): Record<string, string> {
  return { [CLOCK_ANCHOR_ENV]: anchorText(hostAnchorMs) };
}

function anchorText(anchorMs: number): string {
  return `${bootId} ${anchorMs}`;
}

/**
 * The real clock: `performance.now()` anchored to the epoch once, when the process loads it: with the anchor of the
 * process that started this one when there is one on this host (CLOCK_ANCHOR_ENV), else measured (measureEpochAnchorMs).
 *
 * Every reading of one process shares one offset to the epoch, so differences between readings are exact monotonic
 * intervals even if the wall clock is stepped mid-run.
 */
export const systemClock: Clock = clockOnHostAnchor(hostAnchorMs);

/**
 * A real clock anchored to the epoch now rather than when the process started: what each run uses, so that a wall
 * clock stepped (by NTP or by hand) between two runs of one process — a long sweep — moves no later run's times
 * against the servers' clocks. An anchor within WALL_CLOCK_STEP_MS (and its bracket) of the one in use is the same
 * anchor measured again, and the one in use is kept (the processes this one started still share it). Within the run,
 * readings stay monotonic intervals as with `systemClock`.
 */
export function anchoredSystemClock(): Clock {
  const measured = measureEpochAnchor();
  const measuredMs = measured.anchorMs - performanceOriginMs;
  if (Math.abs(measuredMs - hostAnchorMs) > WALL_CLOCK_STEP_MS + measured.widthMs / 2) hostAnchorMs = measuredMs;
  return clockOnHostAnchor(hostAnchorMs);
}

/** A clock that moves only when told to: for timing logic in tests and for virtual time. */
export class ManualClock implements Clock {
  #nowMs: Milliseconds;
  readonly #epochOriginMs: Milliseconds;

  constructor(startMs: Milliseconds = 0, epochOriginMs: Milliseconds = 1_700_000_000_000) {
    this.#nowMs = startMs;
    this.#epochOriginMs = epochOriginMs;
  }

  nowMs(): Milliseconds {
    return this.#nowMs;
  }

  nowEpochSeconds(): EpochSeconds {
    return this.toEpochSeconds(this.#nowMs);
  }

  toEpochSeconds(monotonicMs: Milliseconds): EpochSeconds {
    return (this.#epochOriginMs + monotonicMs) / 1000;
  }

  advanceBy(durationMs: Milliseconds): void {
    if (durationMs < 0) throw new RangeError('a clock cannot move backwards');
    this.#nowMs += durationMs;
  }

  setTo(monotonicMs: Milliseconds): void {
    if (monotonicMs < this.#nowMs) throw new RangeError('a clock cannot move backwards');
    this.#nowMs = monotonicMs;
  }
}
