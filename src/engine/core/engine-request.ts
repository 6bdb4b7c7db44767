import type { EngineFinishReason, EngineRequestView } from '../../types/engine.js';
import type { Milliseconds } from '../../types/time.js';
import { outputTokenId } from './output-tokens.js';

export type RequestPhase = 'waiting' | 'prefilling' | 'decoding' | 'finished';

/**
 * One request inside the engine. Fields are public and mutable for the scheduler's sake (this is the hot path of the
 * virtual-time driver); everything outside src/engine/core sees it through the read-only EngineRequestView.
 */
export class EngineRequest implements EngineRequestView {
  readonly id: string;
  readonly serial: number;
  readonly promptTokenIds: ArrayLike<number>;
  readonly promptLength: number;
  readonly maxNewTokens: number;
  readonly receivedMs: Milliseconds;
  readonly #seed: number;

  phase: RequestPhase = 'waiting';
  outputTokens = 0;
  cachedTokens = 0;
  numRetractions = 0;
  queueEntryMs: Milliseconds;
  forwardEntryMs: Milliseconds = Number.NaN;
  prefillFinishedMs: Milliseconds = Number.NaN;
  finishedMs: Milliseconds = Number.NaN;
  finishReason: EngineFinishReason | null = null;

  /** Tokens (prompt, then earlier outputs after a retraction) that the current admission must have in KV. */
  fillLength = 0;
  /** Tokens of `fillLength` whose KV exists (cached or computed). */
  filledTokens = 0;
  /** Prefill tokens this request computes in the step under way. */
  stepChunkTokens = 0;
  /** KV tokens this request owns outright (not shared through the prefix cache). */
  ownedKvTokens = 0;
  /** Length of the cached prefix this request holds a lock on, and the cache's handle for it. */
  lockedPrefixLength = 0;
  lockedHandle: unknown = null;
  /** Whether this request has ever been admitted (cached_tokens and forward_entry_time are set once). */
  admitted = false;
  /** A PD decode server's request whose prompt KV arrived from a prefill server: admitted without a prefill forward. */
  prebuilt = false;
  /** A slot for the driver (the HTTP stream of this request, for instance). */
  driverData: unknown = null;

  constructor(
    id: string,
    serial: number,
    promptTokenIds: ArrayLike<number>,
    maxNewTokens: number,
    receivedMs: Milliseconds,
    seed: number,
  ) {
    this.id = id;
    this.serial = serial;
    this.promptTokenIds = promptTokenIds;
    this.promptLength = promptTokenIds.length;
    this.maxNewTokens = maxNewTokens;
    this.receivedMs = receivedMs;
    this.queueEntryMs = receivedMs;
    this.#seed = seed;
  }

  outputTokenId(index: number): number {
    return outputTokenId(this.#seed, this.serial, index);
  }

  /** Token `position` of prompt-then-output. */
  tokenAt(position: number): number {
    return position < this.promptLength
      ? (this.promptTokenIds[position] as number)
      : this.outputTokenId(position - this.promptLength);
  }

  /** KV tokens this request holds: its locked cached prefix plus what it owns. */
  get kvTokens(): number {
    return this.lockedPrefixLength + this.ownedKvTokens;
  }

  get remainingOutputTokens(): number {
    return this.maxNewTokens - this.outputTokens;
  }
}
