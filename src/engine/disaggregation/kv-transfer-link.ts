import { ServelabError } from '../../errors/servelab-error.js';
import type { Milliseconds } from '../../types/time.js';

/** A link between prefill and decode servers, as the KV transfer backend (Mooncake, NIXL, ...) sees it. */
export interface KvTransferLinkSettings {
  /** Bytes per second the link carries; transfers in flight at the same time share it equally. */
  bandwidthBytesPerSecond: number;
  /** Fixed time every transfer adds on top of its bytes (the handshake and the last byte's trip), in milliseconds. */
  latencyMs: Milliseconds;
}

/**
 * Defaults where neither the profile nor a flag says: one 200 Gb/s RDMA NIC (25 GB/s, the order of one of the four
 * 200 Gb NICs over which Mooncake publishes 87 GB/s) and a latency of 0.5 ms. Both are assumptions, not measurements:
 * set the real link's figures for numbers that mean something.
 */
export const KV_TRANSFER_DEFAULTS: KvTransferLinkSettings = { bandwidthBytesPerSecond: 25e9, latencyMs: 0.5 };

/** A transfer that has finished: its id and when its last byte arrived (bytes drained plus the latency). */
export interface FinishedTransfer {
  id: string;
  finishMs: Milliseconds;
}

interface Flowing {
  id: string;
  remainingBytes: number;
}

/**
 * The KV transfer link, as a processor-sharing queue: every transfer in flight gets an equal share of the bandwidth
 * (n transfers each move at bandwidth / n), and each finishes `latencyMs` after its last byte left. A transfer alone on
 * the link therefore takes exactly `bytes / bandwidth + latency`. Equal shares is a model, chosen because RDMA flows
 * on one NIC split it roughly evenly; SGLang's transfer threads do not schedule bytes across requests themselves.
 *
 * Pure: it never reads a clock. The driver starts transfers at `nowMs`, asks `nextEventMs()` when to come back, and
 * calls `advanceTo(nowMs)` then, which returns the transfers that finished by that time, in finishing order.
 */
export class KvTransferLink {
  readonly settings: KvTransferLinkSettings;
  readonly #bytesPerMs: number;
  #flowing: Flowing[] = [];
  /** Transfers whose bytes have drained, waiting out the latency: finish times ascend (drain order plus a constant). */
  #delivering: FinishedTransfer[] = [];
  #clockMs: Milliseconds = Number.NEGATIVE_INFINITY;

  constructor(settings: KvTransferLinkSettings) {
    if (!(settings.bandwidthBytesPerSecond > 0) || !Number.isFinite(settings.bandwidthBytesPerSecond)) {
      throw new ServelabError('INVALID_CONFIG', `the KV transfer bandwidth must be a positive number of bytes per second, got ${String(settings.bandwidthBytesPerSecond)}: set it as e.g. 25GB/s`);
    }
    if (!(settings.latencyMs >= 0) || !Number.isFinite(settings.latencyMs)) {
      throw new ServelabError('INVALID_CONFIG', `the KV transfer latency must be zero or more milliseconds, got ${String(settings.latencyMs)}`);
    }
    this.settings = settings;
    this.#bytesPerMs = settings.bandwidthBytesPerSecond / 1000;
  }

  /** The instant the link has been moved to (-Infinity before its first call). */
  get clockMs(): Milliseconds {
    return this.#clockMs;
  }

  /** Transfers whose bytes are still moving (they share the bandwidth). */
  get flowingCount(): number {
    return this.#flowing.length;
  }

  /** Starts moving `bytes` at `nowMs`. Call `advanceTo(nowMs)` first when time has moved since the last call. */
  start(id: string, bytes: number, nowMs: Milliseconds): void {
    if (!(bytes >= 0) || !Number.isFinite(bytes)) {
      throw new ServelabError('INVALID_CONFIG', `a KV transfer needs a finite, non-negative number of bytes, got ${String(bytes)}`);
    }
    this.#drainUntil(nowMs);
    if (bytes === 0) this.#delivering.push({ id, finishMs: nowMs + this.settings.latencyMs });
    else this.#flowing.push({ id, remainingBytes: bytes });
  }

  /** When the next transfer finishes if nothing else starts, or Infinity when none is in flight. */
  nextEventMs(): Milliseconds {
    let next = this.#delivering[0]?.finishMs ?? Number.POSITIVE_INFINITY;
    if (this.#flowing.length > 0) {
      const smallest = Math.min(...this.#flowing.map((flow) => flow.remainingBytes));
      const drainMs = this.#clockMs + (smallest * this.#flowing.length) / this.#bytesPerMs;
      next = Math.min(next, drainMs + this.settings.latencyMs);
    }
    return next;
  }

  /** Moves the link to `nowMs` and returns the transfers that finished by then, earliest first. */
  advanceTo(nowMs: Milliseconds): FinishedTransfer[] {
    this.#drainUntil(nowMs);
    const finished: FinishedTransfer[] = [];
    while (this.#delivering.length > 0 && (this.#delivering[0] as FinishedTransfer).finishMs <= nowMs) {
      finished.push(this.#delivering.shift() as FinishedTransfer);
    }
    return finished;
  }

  /** Moves the flowing bytes to `nowMs`, one drain at a time: each time a transfer's bytes run out the others speed up. */
  #drainUntil(nowMs: Milliseconds): void {
    if (this.#clockMs === Number.NEGATIVE_INFINITY || this.#flowing.length === 0) {
      this.#clockMs = Math.max(this.#clockMs, nowMs);
      return;
    }
    if (nowMs < this.#clockMs) {
      throw new ServelabError('INVALID_CONFIG', `the KV transfer link was moved back in time (${nowMs} ms after ${this.#clockMs} ms): drive it with one monotonic clock`);
    }
    while (this.#flowing.length > 0) {
      const shareBytesPerMs = this.#bytesPerMs / this.#flowing.length;
      const smallest = Math.min(...this.#flowing.map((flow) => flow.remainingBytes));
      const drainMs = this.#clockMs + smallest / shareBytesPerMs;
      if (drainMs > nowMs) {
        const moved = (nowMs - this.#clockMs) * shareBytesPerMs;
        for (const flow of this.#flowing) flow.remainingBytes -= moved;
        break;
      }
      const still: Flowing[] = [];
      for (const flow of this.#flowing) {
        flow.remainingBytes -= smallest;
        if (flow.remainingBytes <= 0) this.#delivering.push({ id: flow.id, finishMs: drainMs + this.settings.latencyMs });
        else still.push(flow);
      }
      this.#flowing = still;
      this.#clockMs = drainMs;
    }
    this.#clockMs = nowMs;
  }
}
