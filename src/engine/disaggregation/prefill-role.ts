import type { EngineRequestInput, EngineRequestView } from '../../types/engine.js';
import type { Milliseconds } from '../../types/time.js';
import type { KvTransferLink } from './kv-transfer-link.js';
import type { KvArrival } from './pd-phases.js';
import { bootstrapTimeoutMessage } from './pd-timeouts.js';

/** What a prefill server's PD half needs from its driver (real time: HTTP and timers; virtual time: direct calls). */
export interface PrefillRoleHooks<Destination> {
  /** Hands a request to the engine's waiting queue at `nowMs`. */
  submit(input: EngineRequestInput, nowMs: Milliseconds): void;
  /** The link's next event moved: call `onLinkTime` at `atMs` (Infinity: nothing pending). */
  scheduleLinkEvent(atMs: Milliseconds): void;
  /** The KV of `room` has reached `destination`: tell the decode server, then the prefill request may answer. */
  deliver(destination: Destination, room: string, arrival: KvArrival, nowMs: Milliseconds): void;
}

interface PrefillEntry<Destination> {
  room: string;
  input: EngineRequestInput | undefined;
  arrivedMs: Milliseconds;
  destination: Destination | undefined;
  forwardEntryMs: Milliseconds;
  prefillFinishedMs: Milliseconds;
  cachedTokens: number;
  bytes: number;
  /** Called once the transfer is over (the prefill leg's answer is held until then). */
  onTransferred: (() => void) | undefined;
}

/**
 * A prefill server's PD half, as SGLang's (python/sglang/srt/disaggregation/prefill.py): a request waits in the
 * bootstrap queue until its decode server has preallocated KV for it and said where to send it (the KV sender polls
 * WaitingForInput only then), goes to the waiting queue and its prefill forward (the radix cache applies), and after
 * its first token stays in flight while its KV crosses the link; then the decode server is told and the request ends.
 * Keyed by bootstrap room. Clock-free: the driver passes the time.
 */
export class PrefillRole<Destination> {
  readonly #link: KvTransferLink;
  readonly #kvBytesPerToken: number;
  readonly #hooks: PrefillRoleHooks<Destination>;
  readonly #entries = new Map<string, PrefillEntry<Destination>>();
  /** Engine request id to room, for requests in the engine. */
  readonly #roomOfRequest = new Map<string, string>();
  /** The last finished transfer: its time (ms) and its bytes over that time (GB/s); 0 before any. */
  lastTransferMs = 0;
  lastTransferGbPerS = 0;

  constructor(link: KvTransferLink, kvBytesPerToken: number, hooks: PrefillRoleHooks<Destination>) {
    this.#link = link;
    this.#kvBytesPerToken = kvBytesPerToken;
    this.#hooks = hooks;
  }

  /** Requests in the bootstrap queue (arrived, no decode destination yet). */
  get bootstrapQueueLength(): number {
    let count = 0;
    for (const entry of this.#entries.values()) if (entry.input !== undefined && entry.destination === undefined) count++;
    return count;
  }

  /** Requests whose KV is on the link (SGLang's in-flight queue). */
  get inflightCount(): number {
    let count = 0;
    for (const entry of this.#entries.values()) if (entry.onTransferred !== undefined) count++;
    return count;
  }

  /**
   * The bootstrap timeout of `room` fell due (`timeoutMs` after its request arrived): a request still waiting for its
   * decode server's destination fails, and the error its answer carries is returned with its request id; undefined
   * when the destination came (or the request went) before, or when it is not due by `nowMs`.
   */
  expireBootstrap(room: string, nowMs: Milliseconds, timeoutMs: Milliseconds): { requestId: string; message: string } | undefined {
    const entry = this.#entries.get(room);
    if (entry?.input === undefined || entry.destination !== undefined) return undefined;
    const waitedMs = nowMs - entry.arrivedMs;
    // Compared as the driver computed the due instant (arrival + timeout): the difference can fall a rounding short.
    if (nowMs < entry.arrivedMs + timeoutMs) return undefined;
    this.#entries.delete(room);
    return { requestId: entry.input.id, message: bootstrapTimeoutMessage(entry.input.id, room, waitedMs) };
  }

  /** A request for `room` arrived at this prefill server. */
  arrive(room: string, input: EngineRequestInput, nowMs: Milliseconds): void {
    const entry = this.#entry(room, nowMs);
    entry.input = input;
    entry.arrivedMs = nowMs;
    this.#release(entry, nowMs);
  }

  /** The decode server preallocated KV for `room` and says where to send it (it may come before the request itself). */
  decodeReady(room: string, destination: Destination, nowMs: Milliseconds): void {
    const entry = this.#entry(room, nowMs);
    entry.destination = destination;
    this.#release(entry, nowMs);
  }

  /**
   * The engine finished a request. True when it is a PD request whose KV now goes over the link: the driver holds its
   * answer until `onTransferred` runs. False for anything else (a health check, an abort), which answers at once.
   */
  onEngineFinish(view: EngineRequestView, nowMs: Milliseconds, onTransferred: () => void): boolean {
    const room = this.#roomOfRequest.get(view.id);
    if (room === undefined) return false;
    this.#roomOfRequest.delete(view.id);
    const entry = this.#entries.get(room);
    if (entry === undefined) return false;
    if (view.finishReason?.type === 'abort' || Number.isNaN(view.prefillFinishedMs)) {
      this.#entries.delete(room);
      return false;
    }
    entry.forwardEntryMs = view.forwardEntryMs;
    entry.prefillFinishedMs = view.prefillFinishedMs;
    entry.cachedTokens = view.cachedTokens;
    entry.onTransferred = onTransferred;
    // The whole prompt's KV moves, cached prefix included: the decode server has no copy of it.
    entry.bytes = view.promptLength * this.#kvBytesPerToken;
    // A real-time driver runs a late engine step at its modelled end, which may lie before the instant its link timer
    // already moved the link to: the transfer starts at that instant, never before it (the link cannot go back).
    this.#link.start(room, entry.bytes, Math.max(nowMs, this.#link.clockMs));
    this.#hooks.scheduleLinkEvent(this.#link.nextEventMs());
    return true;
  }

  /** The driver's link timer fired: delivers the transfers finished by `nowMs`. */
  onLinkTime(nowMs: Milliseconds): void {
    for (const finished of this.#link.advanceTo(nowMs)) {
      const entry = this.#entries.get(finished.id);
      if (entry === undefined) continue;
      this.#entries.delete(finished.id);
      this.lastTransferMs = finished.finishMs - entry.prefillFinishedMs;
      this.lastTransferGbPerS = this.lastTransferMs > 0 ? entry.bytes / (this.lastTransferMs * 1e6) : 0;
      if (entry.destination !== undefined) {
        this.#hooks.deliver(entry.destination, entry.room, {
          prefillQueueMs: entry.forwardEntryMs - entry.arrivedMs,
          prefillForwardMs: entry.prefillFinishedMs - entry.forwardEntryMs,
          kvTransferMs: finished.finishMs - entry.prefillFinishedMs,
          cachedTokens: entry.cachedTokens,
        }, nowMs);
      }
      entry.onTransferred?.();
    }
    this.#hooks.scheduleLinkEvent(this.#link.nextEventMs());
  }

  /** The request for `room` went away before its prefill (its client or the router cancelled it). */
  cancel(room: string): void {
    const entry = this.#entries.get(room);
    if (entry?.input !== undefined) this.#roomOfRequest.delete(entry.input.id);
    this.#entries.delete(room);
  }

  #entry(room: string, nowMs: Milliseconds): PrefillEntry<Destination> {
    let entry = this.#entries.get(room);
    if (entry === undefined) {
      entry = { room, input: undefined, arrivedMs: nowMs, destination: undefined, forwardEntryMs: Number.NaN, prefillFinishedMs: Number.NaN, cachedTokens: 0, bytes: 0, onTransferred: undefined };
      this.#entries.set(room, entry);
    }
    return entry;
  }

  /** Out of the bootstrap queue into the engine once both the request and its destination are here. */
  #release(entry: PrefillEntry<Destination>, nowMs: Milliseconds): void {
    if (entry.input === undefined || entry.destination === undefined || this.#roomOfRequest.has(entry.input.id)) return;
    this.#roomOfRequest.set(entry.input.id, entry.room);
    this.#hooks.submit(entry.input, nowMs);
  }
}
