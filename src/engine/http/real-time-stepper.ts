import type { Clock } from '../../clock/clock.js';
import type { Milliseconds } from '../../types/time.js';
import type { SimEngine, StepPlan } from '../core/sim-engine.js';
import { StepLateness } from './step-lateness.js';

/** Behind the model by more than this, the stepper re-anchors to the wall clock instead of replaying missed steps. */
export const MAX_LAG_MS = 200;
/**
 * Waits shorter than this are finished with setImmediate polling. Kept tiny: a routing test runs many sim-servers on a
 * few cores, and busy-waiting in each would starve the others. setTimeout fires up to ~1 ms late, which delays when
 * tokens are written but never moves the model timeline.
 */
const SPIN_WINDOW_MS = 0.25;

/**
 * Drives the engine core in real time. Step boundaries follow an absolute model timeline: a step that starts at S and
 * lasts D ends at exactly S + D, and the next step starts there, however late the timer fired. Timer lateness therefore
 * shifts when tokens are written to sockets by about a millisecond but never accumulates into the timeline.
 */
export class RealTimeStepper {
  readonly #engine: SimEngine;
  readonly #clock: Clock;
  readonly #onStepCompleted: (plan: StepPlan, endMs: Milliseconds) => void;
  readonly #onIdle: () => void;
  #active = false;
  #closed = false;
  /** End of the last step on the model timeline; NaN while idle. */
  #modelTimeMs: Milliseconds = Number.NaN;
  #timer: NodeJS.Timeout | null = null;
  #immediate: NodeJS.Immediate | null = null;
  /** How late each step completed against the model timeline (served in /server_info). */
  readonly lateness = new StepLateness();

  constructor(
    engine: SimEngine,
    clock: Clock,
    onStepCompleted: (plan: StepPlan, endMs: Milliseconds) => void,
    onIdle: () => void,
  ) {
    this.#engine = engine;
    this.#clock = clock;
    this.#onStepCompleted = onStepCompleted;
    this.#onIdle = onIdle;
  }

  /** Call after submitting work: starts the loop if it is idle (on the next turn, so simultaneous arrivals batch). */
  kick(): void {
    if (this.#active || this.#closed) return;
    this.#active = true;
    this.#immediate = setImmediate(() => {
      this.#immediate = null;
      this.#runStep();
    });
  }

  close(): void {
    this.#closed = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    if (this.#immediate !== null) clearImmediate(this.#immediate);
    this.#timer = null;
    this.#immediate = null;
  }

  #runStep(): void {
    if (this.#closed) return;
    const nowMs = this.#clock.nowMs();
    const fellBehind = !Number.isNaN(this.#modelTimeMs) && nowMs - this.#modelTimeMs > MAX_LAG_MS;
    if (fellBehind) this.lateness.recordReanchor();
    let startMs = Number.isNaN(this.#modelTimeMs) || fellBehind ? nowMs : this.#modelTimeMs;
    let plan = this.#engine.beginStep(startMs);
    if (plan === null && this.#engine.hasWork && startMs < nowMs) {
      // Work arrived after the model-time start (we were running late): start at the wall clock instead.
      startMs = nowMs;
      plan = this.#engine.beginStep(startMs);
    }
    if (plan === null) {
      this.#active = false;
      this.#modelTimeMs = Number.NaN;
      this.#onIdle();
      return;
    }
    const endMs = startMs + plan.durationMs;
    this.#modelTimeMs = endMs;
    this.#waitUntil(endMs, () => {
      this.lateness.record(this.#clock.nowMs() - endMs);
      this.#engine.completeStep(endMs);
      this.#onStepCompleted(plan, endMs);
      this.#runStep();
    });
  }

  #waitUntil(targetMs: Milliseconds, then: () => void): void {
    const check = (): void => {
      this.#timer = null;
      this.#immediate = null;
      if (this.#closed) return;
      const remainingMs = targetMs - this.#clock.nowMs();
      if (remainingMs <= 0) then();
      else if (remainingMs > SPIN_WINDOW_MS) this.#timer = setTimeout(check, remainingMs);
      else this.#immediate = setImmediate(check);
    };
    check();
  }
}
