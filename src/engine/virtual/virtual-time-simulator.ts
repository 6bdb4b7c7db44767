import { ServelabError } from '../../errors/servelab-error.js';
import type { EngineLoad, EngineRequestInput, EngineRequestView, ServingLatency } from '../../types/engine.js';
import type { Milliseconds } from '../../types/time.js';
import type { SimEngine } from '../core/sim-engine.js';
import { createEngine, resolveEngineSetup } from '../create-engine.js';
import type { EngineSettings, ResolvedEngineSetup } from '../create-engine.js';
import { resolveSchedulingPolicy } from '../policy/load-policy.js';
import { costModelFor } from '../profile/cost-model.js';
import { mergeRegionReports, RegionWatch } from '../profile/region-watch.js';
import type { RegionReport } from '../profile/region-watch.js';
import { ScaledStepTimes } from './step-time-scale.js';

/** What the orchestrator hears from the simulated engines; times are virtual milliseconds. */
export interface VirtualEngineEvents {
  /** One generated token. Optional: leave it out when per-token times are not needed (it is the hottest path). */
  onToken?(engineIndex: number, request: EngineRequestView, timeMs: Milliseconds): void;
  /** The request finished (length, abort or rejection); its view holds every timestamp and count. */
  onFinish(engineIndex: number, request: EngineRequestView, timeMs: Milliseconds): void;
  /** A step of the engine ended (its tokens emitted, its KV freed): a PD decode server preallocates then. */
  onStepCompleted?(engineIndex: number, timeMs: Milliseconds): void;
}

/** A callback due at a virtual time (`VirtualTimeSimulator.at`), fired in time order with the engines' events. */
interface Timer {
  timeMs: Milliseconds;
  serial: number;
  callback: (timeMs: Milliseconds) => void;
}

export interface VirtualTimeSimulatorOptions {
  /** One settings object per engine, or a count of engines that share `settings`. */
  engines: number | EngineSettings[];
  settings?: EngineSettings;
  events: VirtualEngineEvents;
  /**
   * Every step of every engine lasts this many times what its profile says (default 1): the twin's sensitivity band
   * (src/orchestration/virtual-time/twin-sensitivity.ts) runs at 1 - e and 1 + e of the profile's step error.
   */
  stepTimeScale?: number;
}

const IDLE = Number.POSITIVE_INFINITY;

const NO_SERVING_LATENCY: ServingLatency = Object.freeze({ ingressMs: 0, deliveryMs: 0 });

/**
 * Many simulated SGLang engines stepped by one discrete-event loop in virtual time: no sockets, no timers, no wall
 * clock. The same engine core as the HTTP server runs here; each engine has at most one pending event (the end of its
 * current step, or the start of a step for work that arrived while it was idle), kept in an indexed min-heap.
 *
 * Use: for each arrival in time order, `advanceTo(t)` (everything before t happens, events fire; the orchestrator can
 * then look at the engines' load to route), then `submit(engine, request, t)`; at the end `runUntilIdle()`. Requests
 * submitted at the same instant are admitted together.
 */
export class VirtualTimeSimulator {
  readonly #engines: SimEngine[];
  readonly #servingLatencies: ServingLatency[];
  /** One per engine whose profile records the region it was measured over. */
  readonly #regionWatches: RegionWatch[] = [];
  /** Time of each engine's pending event, IDLE when none. */
  readonly #eventMs: Float64Array;
  /** Whether the pending event ends a step (true) or starts one (false). */
  readonly #stepUnderWay: Uint8Array;
  /** Min-heap of engine indices by #eventMs, and each engine's position in it (-1 when absent). */
  readonly #heap: Int32Array;
  readonly #heapPosition: Int32Array;
  #heapSize = 0;
  #nowMs: Milliseconds = 0;
  /** Min-heap of timers by (time, serial): few at a time (the PD links' next events), so a plain array heap. */
  readonly #timers: Timer[] = [];
  #timerSerial = 0;
  readonly #onStepCompleted: ((engineIndex: number, timeMs: Milliseconds) => void) | undefined;

  /** Resolves profiles and policies (custom policy modules load asynchronously), then builds the simulator. */
  static async create(options: VirtualTimeSimulatorOptions): Promise<VirtualTimeSimulator> {
    const settingsList = Array.isArray(options.engines)
      ? options.engines
      : Array.from({ length: options.engines }, () => options.settings ?? {});
    const policyCache = new Map<unknown, Awaited<ReturnType<typeof resolveSchedulingPolicy>>>();
    const setups: ResolvedEngineSetup[] = [];
    for (const settings of settingsList) {
      const policySetting = settings.schedulePolicy ?? 'fcfs';
      let policy = policyCache.get(policySetting);
      if (policy === undefined) {
        policy = await resolveSchedulingPolicy(policySetting);
        policyCache.set(policySetting, policy);
      }
      setups.push(resolveEngineSetup({ ...settings, schedulePolicy: policy }));
    }
    return new VirtualTimeSimulator(setups, options.events, options.stepTimeScale);
  }

  constructor(setups: ResolvedEngineSetup[], events: VirtualEngineEvents, stepTimeScale = 1) {
    if (setups.length === 0) throw new ServelabError('INVALID_CONFIG', 'a virtual-time simulation needs at least one engine');
    const onToken = events.onToken;
    this.#onStepCompleted = events.onStepCompleted;
    this.#servingLatencies = setups.map(({ profile }) => (profile.kind === 'simple' ? undefined : profile.servingLatency) ?? NO_SERVING_LATENCY);
    this.#engines = setups.map((setup, engineIndex) => {
      const profile = setup.profile;
      let costModel = costModelFor(profile);
      if (profile.kind !== 'simple' && profile.region !== undefined) {
        const watch = new RegionWatch(costModel, profile.region, profile.name);
        this.#regionWatches.push(watch);
        costModel = watch;
      }
      // Outermost, so the region is counted on the steps' work alike at every scale.
      if (stepTimeScale !== 1) costModel = new ScaledStepTimes(costModel, stepTimeScale);
      return createEngine(
        setup,
        {
          onToken: onToken === undefined ? noop : (request, timeMs) => onToken(engineIndex, request, timeMs),
          onFinish: (request, timeMs) => events.onFinish(engineIndex, request, timeMs),
        },
        costModel,
      );
    });
    const count = setups.length;
    this.#eventMs = new Float64Array(count).fill(IDLE);
    this.#stepUnderWay = new Uint8Array(count);
    this.#heap = new Int32Array(count);
    this.#heapPosition = new Int32Array(count).fill(-1);
  }

  get engineCount(): number {
    return this.#engines.length;
  }

  /** The virtual time everything has been simulated up to. */
  get nowMs(): Milliseconds {
    return this.#nowMs;
  }

  /** Time of the next engine event or timer, Infinity when every engine is idle and no timer is set. */
  nextEventMs(): Milliseconds {
    return Math.min(this.#nextEngineEventMs(), this.#timers[0]?.timeMs ?? IDLE);
  }

  #nextEngineEventMs(): Milliseconds {
    return this.#heapSize === 0 ? IDLE : (this.#eventMs[this.#heap[0] as number] as number);
  }

  /**
   * Calls `callback(timeMs)` at virtual time `timeMs` (not before now), in time order with the engines' events; at the
   * same instant timers go first, in the order they were set. For what happens between engines (a KV transfer).
   */
  at(timeMs: Milliseconds, callback: (timeMs: Milliseconds) => void): void {
    if (timeMs < this.#nowMs) throw new ServelabError('INTERNAL', `cannot set a timer at ${timeMs} ms: virtual time is already ${this.#nowMs} ms`);
    const timers = this.#timers;
    timers.push({ timeMs, serial: this.#timerSerial++, callback });
    let position = timers.length - 1;
    while (position > 0) {
      const parent = (position - 1) >> 1;
      if (!timerBefore(timers[position] as Timer, timers[parent] as Timer)) break;
      [timers[position], timers[parent]] = [timers[parent] as Timer, timers[position] as Timer];
      position = parent;
    }
  }

  #popTimer(): Timer {
    const timers = this.#timers;
    const top = timers[0] as Timer;
    const last = timers.pop() as Timer;
    if (timers.length > 0) {
      timers[0] = last;
      let position = 0;
      for (;;) {
        const left = position * 2 + 1;
        if (left >= timers.length) break;
        let child = left;
        if (left + 1 < timers.length && timerBefore(timers[left + 1] as Timer, timers[left] as Timer)) child = left + 1;
        if (!timerBefore(timers[child] as Timer, timers[position] as Timer)) break;
        [timers[position], timers[child]] = [timers[child] as Timer, timers[position] as Timer];
        position = child;
      }
    }
    return top;
  }

  /** Fires the earliest timer or engine event if it is due before `limitMs` (or at it, when `inclusive`); false if none. */
  #fireNext(limitMs: Milliseconds, inclusive: boolean): boolean {
    const timerMs = this.#timers[0]?.timeMs ?? IDLE;
    const engineMs = this.#nextEngineEventMs();
    const nextMs = Math.min(timerMs, engineMs);
    if (nextMs === IDLE || (inclusive ? nextMs > limitMs : nextMs >= limitMs)) return false;
    this.#nowMs = nextMs;
    if (timerMs <= engineMs) {
      const timer = this.#popTimer();
      timer.callback(timer.timeMs);
    } else {
      this.#fire(this.#heap[0] as number, engineMs);
    }
    return true;
  }

  engine(engineIndex: number): SimEngine {
    return this.#checkedEngine(engineIndex);
  }

  /**
   * The steps simulated so far outside the region the profiles were measured over, over every engine; null when no
   * profile records its region (built-in and hand-made profiles).
   */
  regionReport(): RegionReport | null {
    return mergeRegionReports(this.#regionWatches.map((watch) => watch.report()));
  }

  /** What the engine's profile says a real server adds around its steps (zero when it says nothing). */
  servingLatency(engineIndex: number): ServingLatency {
    this.#checkedEngine(engineIndex);
    return this.#servingLatencies[engineIndex] as ServingLatency;
  }

  load(engineIndex: number): EngineLoad {
    return this.#checkedEngine(engineIndex).load();
  }

  /**
   * Checks a request as the server would before accepting it; null when acceptable, otherwise the 400 message.
   */
  validate(engineIndex: number, input: EngineRequestInput): string | null {
    return this.#checkedEngine(engineIndex).validate(input);
  }

  /** Hands a request to an engine at virtual time `atMs` (not before `nowMs`). */
  submit(engineIndex: number, input: EngineRequestInput, atMs: Milliseconds = this.#nowMs): EngineRequestView {
    if (atMs < this.#nowMs) {
      throw new ServelabError('INTERNAL', `cannot submit at ${atMs} ms: virtual time is already ${this.#nowMs} ms`);
    }
    this.advanceTo(atMs);
    const engine = this.#checkedEngine(engineIndex);
    const view = engine.submit(input, atMs);
    // An idle engine starts a step at the arrival time; requests arriving at the same instant join that step.
    if (this.#eventMs[engineIndex] === IDLE && engine.hasWork) {
      this.#stepUnderWay[engineIndex] = 0;
      this.#schedule(engineIndex, atMs);
    }
    return view;
  }

  /** The client of a request went away at `atMs`. */
  abort(engineIndex: number, requestId: string, atMs: Milliseconds = this.#nowMs): boolean {
    this.advanceTo(atMs);
    return this.#checkedEngine(engineIndex).abort(requestId, atMs);
  }

  /**
   * Runs every engine event due strictly before `timeMs`, in time order; virtual time becomes `timeMs`. Events due at
   * exactly `timeMs` run later, after whatever is submitted at `timeMs`, so a request arriving as a step ends joins the
   * next step, and requests arriving together are admitted together.
   */
  advanceTo(timeMs: Milliseconds): void {
    if (this.#timers.length === 0) {
      // The common case (no PD links): engine events only, without the timer checks.
      while (this.#heapSize > 0) {
        const engineIndex = this.#heap[0] as number;
        const eventMs = this.#eventMs[engineIndex] as number;
        if (eventMs >= timeMs) break;
        this.#nowMs = eventMs;
        this.#fire(engineIndex, eventMs);
        if (this.#timers.length > 0) break;
      }
    }
    while (this.#fireNext(timeMs, false));
    if (timeMs > this.#nowMs) this.#nowMs = timeMs;
  }

  /** Runs until no engine has work and no timer is set; returns the virtual time then. */
  runUntilIdle(): Milliseconds {
    while (this.#fireNext(IDLE, true));
    return this.#nowMs;
  }

  #fire(engineIndex: number, eventMs: Milliseconds): void {
    const engine = this.#engines[engineIndex] as SimEngine;
    if (this.#stepUnderWay[engineIndex] === 1) {
      engine.completeStep(eventMs);
      this.#onStepCompleted?.(engineIndex, eventMs);
    }
    const plan = engine.beginStep(eventMs);
    if (plan === null) {
      this.#stepUnderWay[engineIndex] = 0;
      this.#unschedule(engineIndex);
    } else {
      this.#stepUnderWay[engineIndex] = 1;
      this.#schedule(engineIndex, eventMs + plan.durationMs);
    }
  }

  #checkedEngine(engineIndex: number): SimEngine {
    const engine = this.#engines[engineIndex];
    if (engine === undefined) {
      throw new ServelabError('INVALID_CONFIG', `engine ${engineIndex} does not exist (0..${this.#engines.length - 1})`);
    }
    return engine;
  }

  // --- indexed binary min-heap over engine indices ---

  #schedule(engineIndex: number, timeMs: Milliseconds): void {
    this.#eventMs[engineIndex] = timeMs;
    let position = this.#heapPosition[engineIndex] as number;
    if (position < 0) {
      position = this.#heapSize++;
      this.#heap[position] = engineIndex;
      this.#heapPosition[engineIndex] = position;
    }
    this.#siftUp(position);
    this.#siftDown(this.#heapPosition[engineIndex] as number);
  }

  #unschedule(engineIndex: number): void {
    this.#eventMs[engineIndex] = IDLE;
    const position = this.#heapPosition[engineIndex] as number;
    if (position < 0) return;
    const lastPosition = --this.#heapSize;
    const last = this.#heap[lastPosition] as number;
    this.#heapPosition[engineIndex] = -1;
    if (position === lastPosition) return;
    this.#heap[position] = last;
    this.#heapPosition[last] = position;
    this.#siftUp(position);
    this.#siftDown(this.#heapPosition[last] as number);
  }

  #less(left: number, right: number): boolean {
    const leftMs = this.#eventMs[left] as number;
    const rightMs = this.#eventMs[right] as number;
    // Ties go to the lower engine index, so runs are deterministic.
    return leftMs < rightMs || (leftMs === rightMs && left < right);
  }

  #siftUp(start: number): void {
    const heap = this.#heap;
    let position = start;
    const item = heap[position] as number;
    while (position > 0) {
      const parent = (position - 1) >> 1;
      const parentItem = heap[parent] as number;
      if (!this.#less(item, parentItem)) break;
      heap[position] = parentItem;
      this.#heapPosition[parentItem] = position;
      position = parent;
    }
    heap[position] = item;
    this.#heapPosition[item] = position;
  }

  #siftDown(start: number): void {
    const heap = this.#heap;
    const size = this.#heapSize;
    let position = start;
    const item = heap[position] as number;
    for (;;) {
      const left = position * 2 + 1;
      if (left >= size) break;
      const right = left + 1;
      let child = left;
      if (right < size && this.#less(heap[right] as number, heap[left] as number)) child = right;
      const childItem = heap[child] as number;
      if (!this.#less(childItem, item)) break;
      heap[position] = childItem;
      this.#heapPosition[childItem] = position;
      position = child;
    }
    heap[position] = item;
    this.#heapPosition[item] = position;
  }
}

function noop(): void {}

function timerBefore(left: Timer, right: Timer): boolean {
  return left.timeMs < right.timeMs || (left.timeMs === right.timeMs && left.serial < right.serial);
}
