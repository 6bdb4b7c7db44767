import type { EngineRequestInput, EngineRequestView } from '../../types/engine.js';
import type { Milliseconds } from '../../types/time.js';
import { preallocatableCount } from './decode-prealloc.js';
import type { PreallocEngineState } from './decode-prealloc.js';
import type { KvArrival, PdPhases } from './pd-phases.js';
import { kvWaitingTimeoutMessage } from './pd-timeouts.js';

/** What a decode server's PD half needs from its driver. */
export interface DecodeRoleHooks<Source> {
  /**
   * KV for `room` is reserved: tell its prefill server (`source`) where to send it, and call `expire(room, atMs)` at
   * `timeoutAtMs` (the KV waiting timeout) unless the KV has arrived by then.
   */
  register(source: Source, room: string, nowMs: Milliseconds, timeoutAtMs: Milliseconds): void;
  /** The KV arrived: hand the request to the engine (a prebuilt request, SimEngine.submit). */
  submit(input: EngineRequestInput, nowMs: Milliseconds): void;
}

/** The decode server's engine as this half uses it. */
export interface DecodeRoleEngine extends PreallocEngineState {
  reserveKv(tokens: number): void;
  cancelKvReservation(tokens: number): void;
}

interface DecodeEntry<Source> {
  room: string;
  input: EngineRequestInput;
  source: Source;
  arrivedMs: Milliseconds;
  preallocatedMs: Milliseconds;
  arrival: KvArrival | undefined;
  kvArrivedMs: Milliseconds;
}

/**
 * A decode server's PD half, as SGLang's (python/sglang/srt/disaggregation/decode.py): a request waits in the prealloc
 * queue until KV for its prompt (plus the reserved decode tokens) can be set aside (decode-prealloc.ts), then in the
 * transfer queue until its KV has arrived, then enters the engine as a prebuilt request: no prefill forward, the first
 * token (computed by the prefill server) streamed when it joins the running batch. Keyed by bootstrap room;
 * clock-free.
 */
export class DecodeRole<Source> {
  readonly #engine: DecodeRoleEngine;
  readonly #reservedDecodeTokens: number;
  readonly #waitingTimeoutMs: Milliseconds;
  readonly #hooks: DecodeRoleHooks<Source>;
  readonly #prealloc: DecodeEntry<Source>[] = [];
  readonly #transferring = new Map<string, DecodeEntry<Source>>();
  /** Requests in the engine, by engine request id, until their first token (their phases are complete then). */
  readonly #inEngine = new Map<string, DecodeEntry<Source>>();

  /** `waitingTimeoutMs`: how long a preallocated request waits for its KV before it fails (pd-timeouts.ts). */
  constructor(engine: DecodeRoleEngine, reservedDecodeTokens: number, hooks: DecodeRoleHooks<Source>, waitingTimeoutMs: Milliseconds) {
    if (!(waitingTimeoutMs > 0)) throw new RangeError(`the KV waiting timeout must be positive, not ${waitingTimeoutMs} ms`);
    this.#engine = engine;
    this.#reservedDecodeTokens = reservedDecodeTokens;
    this.#waitingTimeoutMs = waitingTimeoutMs;
    this.#hooks = hooks;
  }

  get preallocQueueLength(): number {
    return this.#prealloc.length;
  }

  get transferQueueLength(): number {
    return this.#transferring.size;
  }

  /** A request for `room` arrived; `source` names its prefill server (the injected bootstrap host and port). */
  arrive(room: string, input: EngineRequestInput, source: Source, nowMs: Milliseconds): void {
    this.#prealloc.push({ room, input, source, arrivedMs: nowMs, preallocatedMs: Number.NaN, arrival: undefined, kvArrivedMs: Number.NaN });
    this.preallocate(nowMs);
  }

  /** Reserves KV for the head of the prealloc queue as far as it fits; call after arrivals and after every engine step. */
  preallocate(nowMs: Milliseconds): void {
    if (this.#prealloc.length === 0) return;
    const queue = this.#prealloc.map((entry) => ({ promptTokens: entry.input.promptTokenIds.length }));
    const count = preallocatableCount(queue, this.#engine, this.#transferring.size, this.#reservedDecodeTokens);
    for (const entry of this.#prealloc.splice(0, count)) {
      this.#engine.reserveKv(entry.input.promptTokenIds.length);
      entry.preallocatedMs = nowMs;
      this.#transferring.set(entry.room, entry);
      this.#hooks.register(entry.source, entry.room, nowMs, nowMs + this.#waitingTimeoutMs);
    }
  }

  /**
   * The KV waiting timeout of `room` fell due: a request still waiting for its KV fails (its reservation is given back)
   * and the error its answer carries is returned, with its request id; undefined when its KV came (or it went) before.
   */
  expire(room: string, nowMs: Milliseconds): { requestId: string; message: string } | undefined {
    const entry = this.#transferring.get(room);
    if (entry === undefined) return undefined;
    const waitedMs = nowMs - entry.preallocatedMs;
    // Not due yet: nothing (a driver whose timer fires early passes the due instant, as the link's timer does). The
    // due instant is compared as register() was given it: `nowMs - preallocatedMs < timeout` can hold at that very
    // instant by float rounding ((a + 200) - a is 199.99999999999997 for some a), and the request would wait forever.
    if (nowMs < entry.preallocatedMs + this.#waitingTimeoutMs) return undefined;
    this.#transferring.delete(room);
    this.#engine.cancelKvReservation(entry.input.promptTokenIds.length);
    return { requestId: entry.input.id, message: kvWaitingTimeoutMessage(entry.input.id, room, waitedMs) };
  }

  /** The prefill server says the KV of `room` is here. False when no request waits for it (cancelled, or unknown). */
  kvArrived(room: string, arrival: KvArrival, nowMs: Milliseconds): boolean {
    const entry = this.#transferring.get(room);
    if (entry === undefined) return false;
    this.#transferring.delete(room);
    entry.arrival = arrival;
    entry.kvArrivedMs = nowMs;
    this.#inEngine.set(entry.input.id, entry);
    this.#hooks.submit({ ...entry.input, prebuilt: { receivedMs: entry.arrivedMs, cachedTokens: arrival.cachedTokens } }, nowMs);
    return true;
  }

  /**
   * The request's phases, once its first token is out (undefined before, and for a request that is not a PD one).
   * The first call after the first token forgets the request, so call it once, then keep what it returned.
   */
  takePhases(view: EngineRequestView): PdPhases | undefined {
    const entry = this.#inEngine.get(view.id);
    if (entry === undefined || entry.arrival === undefined || Number.isNaN(view.forwardEntryMs)) return undefined;
    this.#inEngine.delete(view.id);
    return { ...entry.arrival, kvTransferWaitMs: entry.kvArrivedMs - entry.preallocatedMs, decodeQueueMs: view.forwardEntryMs - view.queueEntryMs };
  }

  /** The request of `room` went away before its KV arrived: its reservation, if it had one, is given back. */
  cancel(room: string, requestId: string): boolean {
    this.#inEngine.delete(requestId);
    const waiting = this.#prealloc.findIndex((entry) => entry.room === room);
    if (waiting >= 0) {
      this.#prealloc.splice(waiting, 1);
      return true;
    }
    const entry = this.#transferring.get(room);
    if (entry === undefined) return false;
    this.#transferring.delete(room);
    this.#engine.cancelKvReservation(entry.input.promptTokenIds.length);
    return true;
  }
}
