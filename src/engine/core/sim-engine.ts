import { ServelabError } from '../../errors/servelab-error.js';
import type {
  CostModel,
  EngineConfig,
  EngineCounters,
  EngineListener,
  EngineLoad,
  EngineRequestInput,
  EngineRequestView,
  SchedulingContext,
  SchedulingPolicy,
  StepWork,
} from '../../types/engine.js';
import type { Milliseconds } from '../../types/time.js';
import { attentionPairs } from '../profile/cost-model.js';
import { EngineRequest } from './engine-request.js';
import { newTokenRatioAfterRetraction, retractDecode } from './retract-decode.js';
import { KvPool } from './kv-pool.js';
import type { PrefixCache } from './prefix-cache.js';
import { CLIENT_ABORT_MESSAGE, inputTooLongAbort, kvCacheFullAbort, tokenizerRefusal } from './sglang-error-texts.js';

/**
 * Constants that SGLang's scheduler uses (python/sglang/srt/managers/schedule_policy.py, scheduler.py, environ.py):
 * a new request reserves at most this many future decode tokens when it is admitted;
 */
export const CLIP_MAX_NEW_TOKENS = 4096;
/** the share of a running request's remaining decode tokens that stays reserved starts at 0.7 x conservativeness, */
export const INIT_NEW_TOKEN_RATIO = 0.7;
/** decays to 0.14 of that over 600 decode steps, */
export const MIN_NEW_TOKEN_RATIO_FACTOR = 0.14;
export const NEW_TOKEN_RATIO_DECAY_STEPS = 600;
/** and a retraction frees enough KV for every remaining request to decode this many more steps. */
export const RETRACT_DECODE_STEPS = 20;

export type StepKind = 'prefill' | 'decode';

/** The step under way, between beginStep and completeStep. */
export interface StepPlan {
  kind: StepKind;
  startMs: Milliseconds;
  durationMs: Milliseconds;
  batchSize: number;
  /**
   * Running requests this (prefill) step also decodes one token for (SGLang's mixed chunk, `enableMixedChunk`); 0 for a
   * plain prefill or a decode step.
   */
  mixedDecodeSequences: number;
  /** Requests admitted for the first time in this (prefill) step, and the prompt tokens they found cached. */
  newRequests: number;
  newPromptTokens: number;
  newCachedTokens: number;
  work: StepWork;
}

export interface SimEngineOptions {
  config: EngineConfig;
  costModel: CostModel;
  policy: SchedulingPolicy;
  prefixCache: PrefixCache;
  listener: EngineListener;
}

/**
 * The simulated SGLang scheduler: a waiting queue, a running batch and one step at a time. It never reads a clock: the
 * driver calls `beginStep(now)`, waits (really or virtually) for the returned duration, then calls `completeStep(end)`.
 *
 * Like SGLang without mixed chunks (its default), a step is either a prefill batch (new requests, or the next chunk of
 * a long prompt) or a decode batch (one token for every running request); prefill goes first whenever something can be
 * admitted, and decoding pauses meanwhile. A prefill step yields each finished prompt's first token; a decode step
 * yields one token per running request.
 *
 * With `enableMixedChunk` (SGLang's --enable-mixed-chunk) a prefill step also carries the running batch, one decode
 * token per running request, so arrivals no longer pause decoding. As in SGLang's scheduler (PrefillAdder's
 * mixed_with_decode_tokens, ScheduleBatch.mix_with_running), those decode tokens are taken off the chunk budget first,
 * and the mode needs chunked prefill on.
 */
export class SimEngine {
  readonly config: EngineConfig;
  readonly #costModel: CostModel;
  readonly #policy: SchedulingPolicy;
  readonly #cache: PrefixCache;
  /** The KV token pool: what requests own, what the cache holds, allocation and eviction. */
  readonly #kv: KvPool;
  readonly #listener: EngineListener;

  /** Waiting requests in queue order. */
  #waiting: EngineRequest[] = [];
  /** PD decode: requests whose KV arrived, waiting to join the running batch without a prefill (a prebuilt batch). */
  #prebuilt: EngineRequest[] = [];
  /** Requests refused by the scheduler, answered (finished with their abort reason) at the next step. */
  #rejected: EngineRequest[] = [];
  /** Requests that finished prefill and decode one token per decode step. */
  #running: EngineRequest[] = [];
  /** The request whose prompt is being prefilled chunk by chunk, if any (it holds a running slot). */
  #chunked: EngineRequest | null = null;
  #byId = new Map<string, EngineRequest>();
  #serial = 0;
  #newTokenRatio: number;
  readonly #initNewTokenRatio: number;
  readonly #minNewTokenRatio: number;
  readonly #newTokenRatioDecay: number;

  #step: StepPlan | null = null;
  /** Reused between steps so that stepping allocates nothing per step. */
  readonly #plan: StepPlan = {
    kind: 'decode',
    startMs: 0,
    durationMs: 0,
    batchSize: 0,
    mixedDecodeSequences: 0,
    newRequests: 0,
    newPromptTokens: 0,
    newCachedTokens: 0,
    work: { prefillTokens: 0, prefillAttentionPairs: 0, decodeSequences: 0, decodeKvTokens: 0 },
  };
  /** The prefill batch of the step under way: the first #prefillBatchSize entries (the array is reused). */
  readonly #prefillBatch: EngineRequest[] = [];
  #prefillBatchSize = 0;
  #completingDecode = false;
  #abortedWhileCompleting = false;
  readonly #counters: EngineCounters = {
    promptTokens: 0,
    cachedPromptTokens: 0,
    prefilledTokens: 0,
    generatedTokens: 0,
    finishedRequests: 0,
    retractions: 0,
    steps: 0,
    prefillSteps: 0,
    decodeSteps: 0,
  };

  constructor(options: SimEngineOptions) {
    validateConfig(options.config);
    this.config = options.config;
    this.#costModel = options.costModel;
    this.#policy = options.policy;
    this.#cache = options.prefixCache;
    this.#kv = new KvPool(options.config.maxTotalTokens, options.prefixCache, options.config.pageSize);
    this.#listener = options.listener;
    this.#initNewTokenRatio = Math.min(INIT_NEW_TOKEN_RATIO * options.config.scheduleConservativeness, 1);
    this.#minNewTokenRatio = Math.min(this.#initNewTokenRatio * MIN_NEW_TOKEN_RATIO_FACTOR, 1);
    this.#newTokenRatioDecay = (this.#initNewTokenRatio - this.#minNewTokenRatio) / NEW_TOKEN_RATIO_DECAY_STEPS;
    this.#newTokenRatio = this.#initNewTokenRatio;
  }

  /**
   * Longest prompt plus output one request may hold: SGLang's max_req_len = min(context - 1, KV pool - 1), the pool in
   * whole pages.
   */
  get maxRequestTokens(): number {
    return Math.min(this.config.contextLength - 1, this.#kv.maxTotalTokens - 1);
  }

  /** KV capacity in tokens: `maxTotalTokens` rounded down to whole pages, as SGLang sizes its pool. */
  get kvCapacityTokens(): number {
    return this.#kv.maxTotalTokens;
  }

  /** SGLang's max_req_input_len (max_req_len - 5): a prompt this long or longer is aborted by the scheduler. */
  get maxRequestInputTokens(): number {
    return this.maxRequestTokens - 5;
  }

  /**
   * Checks a request the way SGLang's tokenizer manager does before it reaches the scheduler; returns the error
   * message of the 400 answer, or null when the request is acceptable.
   */
  validate(input: EngineRequestInput): string | null {
    return tokenizerRefusal(input, this.config.contextLength);
  }

  /**
   * Puts a request in the waiting queue at `nowMs`. A request that can never fit the KV pool is finished at once with
   * an abort reason, as SGLang's scheduler does. Call `validate` first for the checks SGLang answers with a 400.
   */
  submit(input: EngineRequestInput, nowMs: Milliseconds): EngineRequestView {
    if (this.#byId.has(input.id)) {
      throw new ServelabError('INVALID_CONFIG', `request id "${input.id}" is already in the engine: use unique rids`);
    }
    // SGLang clamps max_new_tokens so that one request alone always fits its limits (init_req_max_new_tokens).
    const maxNewTokens = Math.max(
      0,
      Math.min(input.maxNewTokens, this.maxRequestTokens - input.promptTokenIds.length - 1),
    );
    const request = new EngineRequest(
      input.id,
      this.#serial++,
      input.promptTokenIds,
      maxNewTokens,
      input.prebuilt?.receivedMs ?? nowMs,
      this.config.seed,
    );
    if (input.driverData !== undefined) request.driverData = input.driverData;
    this.#counters.promptTokens += request.promptLength;
    if (input.prebuilt !== undefined) {
      // Its KV is in slots reserved when it was preallocated; it enters the waiting queue now that the KV is here.
      request.prebuilt = true;
      request.queueEntryMs = nowMs;
      request.cachedTokens = input.prebuilt.cachedTokens;
      this.#byId.set(request.id, request);
      this.#prebuilt.push(request);
      return request;
    }
    if (request.promptLength >= this.maxRequestInputTokens) {
      // Like SGLang's scheduler: the request is marked aborted and answered at the next scheduling round.
      request.finishReason = inputTooLongAbort(request.promptLength, this.maxRequestInputTokens);
      this.#byId.set(request.id, request);
      this.#rejected.push(request);
      return request;
    }
    this.#byId.set(request.id, request);
    this.#waiting.push(request);
    return request;
  }

  /** Stops a request (client gone): frees its KV; no further listener calls for it. Returns false if unknown. */
  abort(id: string, nowMs: Milliseconds, message = CLIENT_ABORT_MESSAGE): boolean {
    const request = this.#byId.get(id);
    if (request === undefined || request.phase === 'finished') return false;
    if (request.phase === 'waiting' && request.prebuilt) {
      removeFrom(this.#prebuilt, request);
      this.#kv.cancelReservation(request.promptLength);
    } else if (request.phase === 'waiting') {
      removeFrom(this.#waiting, request);
      removeFrom(this.#rejected, request);
    } else if (request.phase === 'decoding') {
      if (this.#completingDecode) this.#abortedWhileCompleting = true;
      else removeFrom(this.#running, request);
    } else if (this.#chunked === request) {
      this.#chunked = null;
    }
    this.#kv.release(request, false, nowMs);
    this.#finish(request, nowMs, { type: 'abort', message });
    return true;
  }

  get isIdle(): boolean {
    return (
      this.#waiting.length === 0 &&
      this.#prebuilt.length === 0 &&
      this.#rejected.length === 0 &&
      this.#running.length === 0 &&
      this.#chunked === null &&
      this.#step === null
    );
  }

  get hasWork(): boolean {
    return this.#waiting.length > 0 || this.#prebuilt.length > 0 || this.#rejected.length > 0 || this.#running.length > 0 || this.#chunked !== null;
  }

  get stepInProgress(): StepPlan | null {
    return this.#step;
  }

  get counters(): Readonly<EngineCounters> {
    return this.#counters;
  }

  get newTokenRatio(): number {
    return this.#newTokenRatio;
  }

  load(): EngineLoad {
    const usedTokens = this.#kv.usedTokens;
    let waitingTokens = 0;
    for (const request of this.#waiting) waitingTokens += request.promptLength + request.outputTokens;
    if (this.#chunked !== null) waitingTokens += this.#chunked.fillLength - this.#chunked.filledTokens;
    return {
      runningRequests: this.#running.length + (this.#chunked === null ? 0 : 1),
      waitingRequests: this.#waiting.length + this.#prebuilt.length,
      waitingTokens,
      waitingUncachedTokens: waitingTokens,
      usedTokens,
      evictableTokens: this.#cache.evictableTokens,
      maxTotalTokens: this.#kv.maxTotalTokens,
      tokenUsage: usedTokens / this.#kv.maxTotalTokens,
    };
  }

  /** Every request the engine still holds (waiting or running). */
  get liveRequests(): number {
    return this.#byId.size;
  }

  /** Empties the prefix cache; refused (false) while requests are waiting or running, like SGLang's /flush_cache. */
  flushCache(): boolean {
    if (!this.isIdle) return false;
    this.#cache.reset();
    return true;
  }

  /**
   * Starts the next step at `nowMs`: admits what fits, or decodes the running batch. Returns the plan (its duration
   * from the cost model; the object is reused, so copy what you keep past the next beginStep), or null when there is
   * nothing to do. Requests that entered the queue after `nowMs` wait
   * for a later step, so a driver that runs late never admits a request before it arrived.
   */
  beginStep(nowMs: Milliseconds): StepPlan | null {
    if (this.#step !== null) throw new ServelabError('INTERNAL', 'beginStep called while a step is under way');
    if (this.#rejected.length > 0) this.#answerRejected(nowMs);
    if (this.#prebuilt.length > 0) this.#admitPrebuilt(nowMs);
    const prefill = this.#schedulePrefill(nowMs);
    if (prefill !== null) return prefill;
    if (this.#running.length === 0) return null;
    return this.#scheduleDecode(nowMs);
  }

  /** Ends the step under way at `endMs` (normally its start plus its duration) and emits its tokens. */
  completeStep(endMs: Milliseconds): void {
    const step = this.#step;
    if (step === null) throw new ServelabError('INTERNAL', 'completeStep called with no step under way');
    this.#step = null;
    const batch = this.#prefillBatch;
    const batchSize = this.#prefillBatchSize;
    this.#prefillBatchSize = 0;
    this.#counters.steps++;
    if (step.kind === 'prefill') {
      this.#counters.prefillSteps++;
      // A mixed step's running batch gets its token first, before this step's finished prompts join it.
      if (step.mixedDecodeSequences > 0) this.#completeDecodeBatch(endMs);
      for (let index = 0; index < batchSize; index++) {
        const request = batch[index] as EngineRequest;
        if (request.phase === 'finished') continue;
        request.filledTokens += request.stepChunkTokens;
        this.#counters.prefilledTokens += request.stepChunkTokens;
        request.stepChunkTokens = 0;
        if (request.filledTokens < request.fillLength) continue;
        if (this.#chunked === request) this.#chunked = null;
        if (Number.isNaN(request.prefillFinishedMs)) request.prefillFinishedMs = endMs;
        // The prompt's KV now exists: share it through the cache while the request decodes (SGLang's
        // cache_unfinished_req), so later requests with the same prefix hit it.
        if (this.#cache.enabled) this.#kv.moveIntoCache(request, request.kvTokens, endMs, true);
        if (request.maxNewTokens === 0) {
          this.#kv.release(request, true, endMs);
          this.#finish(request, endMs, { type: 'length', length: 0 });
          continue;
        }
        this.#emitToken(request, endMs);
        if (request.outputTokens >= request.maxNewTokens) {
          this.#kv.release(request, true, endMs);
          this.#finish(request, endMs, { type: 'length', length: request.outputTokens });
        } else {
          request.phase = 'decoding';
          this.#running.push(request);
        }
      }
    } else {
      this.#counters.decodeSteps++;
      this.#completeDecodeBatch(endMs);
    }
    // SGLang resets the new-token ratio when the scheduler finds nothing to run (its idle check).
    if (this.isIdle) this.#newTokenRatio = this.#initNewTokenRatio;
  }

  /**
   * KV tokens a PD decode server could still preallocate: free (or evictable) slots; reservations are already taken.
   */
  get availableKvTokens(): number {
    return this.#kv.availableTokens;
  }

  /** Requests running (decoding) and waiting (prebuilt ones included): what a decode server reserves decode room for. */
  get runningAndWaitingRequests(): number {
    return this.#running.length + (this.#chunked === null ? 0 : 1) + this.#waiting.length + this.#prebuilt.length;
  }

  /** Reserves KV slots for a PD request's prompt before its KV is sent (decode preallocation). */
  reserveKv(tokens: number): void {
    this.#kv.reserve(tokens);
  }

  /** Gives back a reservation whose request went away before its KV arrived. */
  cancelKvReservation(tokens: number): void {
    this.#kv.cancelReservation(tokens);
  }

  /**
   * SGLang's prebuilt batch on a decode server (python/sglang/srt/disaggregation/decode.py,
   * event_loop_normal_disagg_decode: "Generate fake extend output"): requests whose KV arrived join the running batch
   * with no forward, and the first token the prefill server computed is streamed then. They take running slots in
   * arrival order while any are free; the rest wait.
   */
  #admitPrebuilt(nowMs: Milliseconds): void {
    let admitted = 0;
    for (const request of this.#prebuilt) {
      if (request.queueEntryMs > nowMs) break;
      if (this.#running.length + (this.#chunked === null ? 0 : 1) >= this.config.maxRunningRequests) break;
      admitted++;
      this.#kv.claimReservation(request, request.promptLength);
      request.admitted = true;
      request.forwardEntryMs = nowMs;
      request.prefillFinishedMs = nowMs;
      request.fillLength = request.promptLength;
      request.filledTokens = request.promptLength;
      this.#emitToken(request, nowMs);
      if (request.outputTokens >= request.maxNewTokens) {
        this.#kv.release(request, true, nowMs);
        this.#finish(request, nowMs, { type: 'length', length: request.outputTokens });
      } else {
        request.phase = 'decoding';
        this.#running.push(request);
      }
    }
    if (admitted > 0) this.#prebuilt.splice(0, admitted);
  }

  /** One token for every running request (a decode step, or the decode part of a mixed step). */
  #completeDecodeBatch(endMs: Milliseconds): void {
    {
      // The decode batch is the running list itself, compacted in place as requests finish (no per-step copies).
      // A listener may abort another running request meanwhile: abort then only marks it, and it is dropped here.
      const running = this.#running;
      this.#completingDecode = true;
      let write = 0;
      for (let read = 0; read < running.length; read++) {
        const request = running[read] as EngineRequest;
        if (request.phase === 'finished') continue;
        this.#emitToken(request, endMs);
        if (request.outputTokens >= request.maxNewTokens) {
          this.#kv.release(request, true, endMs);
          this.#finish(request, endMs, { type: 'length', length: request.outputTokens });
        } else {
          running[write++] = request;
        }
      }
      if (write !== running.length) running.length = write;
      this.#completingDecode = false;
      if (this.#abortedWhileCompleting) {
        this.#abortedWhileCompleting = false;
        this.#running = running.filter((request) => request.phase !== 'finished');
      }
    }
  }

  #answerRejected(nowMs: Milliseconds): void {
    const due = this.#rejected.filter((request) => request.queueEntryMs <= nowMs);
    if (due.length === 0) return;
    this.#rejected = this.#rejected.filter((request) => request.queueEntryMs > nowMs);
    for (const request of due) this.#finish(request, nowMs, request.finishReason);
  }

  #emitToken(request: EngineRequest, timeMs: Milliseconds): void {
    request.outputTokens++;
    this.#counters.generatedTokens++;
    this.#listener.onToken(request, timeMs);
  }

  #finish(request: EngineRequest, timeMs: Milliseconds, reason: EngineRequest['finishReason']): void {
    request.phase = 'finished';
    request.finishReason = reason;
    request.finishedMs = timeMs;
    this.#byId.delete(request.id);
    this.#counters.finishedRequests++;
    this.#listener.onFinish(request, timeMs);
  }

  #schedulingContext(nowMs: Milliseconds): SchedulingContext {
    return {
      nowMs,
      runningRequests: this.#running.length + (this.#chunked === null ? 0 : 1),
      prefixLength: (view: EngineRequestView) => {
        const request = view as EngineRequest;
        return this.#cache.enabled ? this.#cache.match(request, request.promptLength, nowMs).length : 0;
      },
    };
  }

  #schedulePrefill(nowMs: Milliseconds): StepPlan | null {
    const runningCount = this.#running.length + (this.#chunked === null ? 0 : 1);
    if (this.#chunked === null && (this.#waiting.length === 0 || runningCount >= this.config.maxRunningRequests)) {
      return null;
    }
    const chunkBudget = this.config.chunkedPrefillSize > 0 ? this.config.chunkedPrefillSize : Number.POSITIVE_INFINITY;
    // SGLang mixes only when chunked prefill is on (is_mixed_chunk needs a chunked_prefill_size).
    const mixing = this.config.enableMixedChunk && this.config.chunkedPrefillSize > 0 && this.#running.length > 0;
    let remainingChunkTokens = mixing ? chunkBudget - this.#running.length : chunkBudget;
    // A running batch as large as the chunk leaves no room for prefill: decode this step (SGLang's adder refuses too).
    if (remainingChunkTokens <= 0) return null;
    // Future decode tokens of the running batch stay reserved, scaled by the (decaying) new-token ratio.
    let reservedTokens = 0;
    for (const request of this.#running) {
      reservedTokens += Math.min(request.remainingOutputTokens, CLIP_MAX_NEW_TOKENS) * this.#newTokenRatio;
    }
    let remainingTotalTokens = this.#kv.availableTokens - reservedTokens;
    const kv = this.#kv;
    // SGLang keeps one more page per admitted request for page alignment (PrefillAdder's per_req_token_overhead, charged
    // by the prefill budget's reserve). At page size 1 the simulator leaves it out, as it did before pages.
    const pageOverheadTokens = this.config.pageSize > 1 ? this.config.pageSize : 0;
    this.#prefillBatchSize = 0;
    const work = this.#resetWork();
    let newRequests = 0;
    let newPromptTokens = 0;
    let newCachedTokens = 0;

    const chunked = this.#chunked;
    if (chunked !== null) {
      const chunkTokens = Math.min(
        chunked.fillLength - chunked.filledTokens,
        remainingChunkTokens,
        this.#kv.availableTokens,
      );
      // The pool is full: let the running batch decode (and retract if it must) before the prompt continues.
      if (chunkTokens <= 0) return null;
      this.#addChunk(chunked, chunkTokens, work);
      // SGLang bills both budgets the chunk's whole pages (schedule_policy.py `_update_prefill_budget`).
      remainingChunkTokens -= kv.slotsFor(chunkTokens);
      remainingTotalTokens -= kv.slotsFor(chunkTokens) + pageOverheadTokens;
    }

    let admittedRunning = runningCount;
    if (this.#chunked === null || remainingChunkTokens > 0) {
      this.#policy.order(this.#waiting, this.#schedulingContext(nowMs));
      let admittedCount = 0;
      for (const request of this.#waiting) {
        if (admittedRunning >= this.config.maxRunningRequests || remainingChunkTokens <= 0) break;
        if (request.queueEntryMs > nowMs) break;
        const fillLength = request.promptLength + request.outputTokens;
        // At least one token must be computed to produce the next token, so a full hit still prefills one.
        const match = this.#cache.enabled ? this.#cache.match(request, fillLength - 1, nowMs) : null;
        const prefixLength = match === null ? 0 : match.length;
        const extendTokens = fillLength - prefixLength;
        const futureTokens = Math.min(request.remainingOutputTokens, CLIP_MAX_NEW_TOKENS);
        const nothingElseRuns = admittedRunning === 0 && this.#prefillBatchSize === 0;
        const fits =
          extendTokens + futureTokens + pageOverheadTokens <= remainingTotalTokens ||
          // Guarantee progress: an otherwise idle engine takes the head request if its prompt fits at all;
          // retraction handles a later shortfall.
          (nothingElseRuns && kv.slotsFor(extendTokens) <= kv.availableTokens);
        if (!fits) break;
        // Whole if its pages fit what is left of the chunk budget; otherwise a chunk cut down to whole pages
        // (schedule_policy.py `_select_prefill_admission`: `chunk_tokens_limit // page_size * page_size`, the chunk's
        // end on a page boundary), and nothing at all when that is no page.
        const whole = kv.slotsFor(extendTokens) <= remainingChunkTokens;
        const chunkTokens = whole ? extendTokens : pageFloor(prefixLength + pageFloor(remainingChunkTokens, kv.pageSize), kv.pageSize) - prefixLength;
        if (!whole && chunkTokens <= 0) break;
        if (match !== null && match.length > 0) {
          this.#cache.lock(match.handle);
          request.lockedHandle = match.handle;
          request.lockedPrefixLength = match.length;
        }
        if (!request.admitted) {
          request.admitted = true;
          request.cachedTokens = prefixLength;
          this.#counters.cachedPromptTokens += prefixLength;
          request.forwardEntryMs = nowMs;
          newRequests++;
          newPromptTokens += request.promptLength;
          newCachedTokens += prefixLength;
        }
        request.fillLength = fillLength;
        request.filledTokens = prefixLength;
        request.phase = 'prefilling';
        admittedCount++;
        admittedRunning++;
        if (whole) {
          this.#addChunk(request, extendTokens, work);
          remainingChunkTokens -= kv.slotsFor(extendTokens);
          remainingTotalTokens -= kv.slotsFor(extendTokens) + pageOverheadTokens + futureTokens;
        } else {
          this.#addChunk(request, chunkTokens, work);
          remainingChunkTokens -= chunkTokens;
          remainingTotalTokens -= chunkTokens + pageOverheadTokens;
          this.#chunked = request;
          // Less than a page of the budget is left: no later request fits it, each taking a page at least.
          break;
        }
      }
      if (admittedCount > 0) this.#waiting.splice(0, admittedCount);
    }
    if (this.#prefillBatchSize === 0) return null;
    // The running batch joins the step when every request can have its next KV slot; otherwise the prefill runs alone
    // and the next decode step retracts as it must.
    let mixedDecodeSequences = 0;
    if (mixing && this.#kv.availableTokens >= this.#kv.decodeSlotsNeeded(this.#running)) {
      mixedDecodeSequences = this.#addRunningBatch(work);
    }
    const plan = this.#startStep('prefill', nowMs, this.#prefillBatchSize, work);
    plan.mixedDecodeSequences = mixedDecodeSequences;
    plan.newRequests = newRequests;
    plan.newPromptTokens = newPromptTokens;
    plan.newCachedTokens = newCachedTokens;
    return plan;
  }

  #addChunk(request: EngineRequest, chunkTokens: number, work: StepWork): void {
    this.#kv.allocate(request, chunkTokens);
    request.stepChunkTokens = chunkTokens;
    work.prefillTokens += chunkTokens;
    work.prefillAttentionPairs += attentionPairs(request.filledTokens, chunkTokens);
    this.#prefillBatch[this.#prefillBatchSize++] = request;
  }

  #scheduleDecode(nowMs: Milliseconds): StepPlan {
    // Each running request needs one more KV slot this step (a new page when its pages are full); retract the least
    // advanced requests until all fit.
    if (this.#kv.availableTokens < this.#kv.decodeSlotsNeeded(this.#running)) this.#retract(nowMs);
    const work = this.#resetWork();
    this.#addRunningBatch(work);
    // Only a decode step decays the ratio: SGLang's mixed path skips update_running_batch, where the decay happens.
    this.#newTokenRatio = Math.max(this.#minNewTokenRatio, this.#newTokenRatio - this.#newTokenRatioDecay);
    return this.#startStep('decode', nowMs, this.#running.length, work);
  }

  /** One decode token for every running request: its KV slot and its work (the KV it reads, the new slot included). */
  #addRunningBatch(work: StepWork): number {
    this.#kv.ensureFree(this.#kv.decodeSlotsNeeded(this.#running));
    for (const request of this.#running) {
      this.#kv.allocate(request, 1);
      work.decodeSequences++;
      work.decodeKvTokens += request.kvTokens;
    }
    return this.#running.length;
  }

  /**
   * SGLang's retract_decode: sort by (decoded tokens, then shortest prompt) and retract from the least decoded, longest
   * prompt first, until the rest can take one more decode step; retracted requests keep their output and go back to
   * the queue, and the new-token ratio rises so admission leaves room for RETRACT_DECODE_STEPS more steps.
   */
  #retract(nowMs: Milliseconds): void {
    const retracted = retractDecode(this.#running, this.#kv, nowMs);
    if (retracted.length > 0) {
      this.#counters.retractions += retracted.length;
      this.#running = this.#running.filter((request) => request.phase === 'decoding');
      for (const request of retracted) this.#waiting.push(request);
      this.#newTokenRatio = newTokenRatioAfterRetraction(this.#running, RETRACT_DECODE_STEPS);
    }
    // A lone request that still cannot get a slot can never finish: end it like an out-of-memory abort.
    if (this.#kv.availableTokens < this.#kv.decodeSlotsNeeded(this.#running)) {
      for (const request of this.#running.splice(0)) {
        this.#kv.release(request, false, nowMs);
        this.#finish(request, nowMs, kvCacheFullAbort());
      }
    }
  }

  #resetWork(): StepWork {
    const work = this.#plan.work;
    work.prefillTokens = 0;
    work.prefillAttentionPairs = 0;
    work.decodeSequences = 0;
    work.decodeKvTokens = 0;
    return work;
  }

  #startStep(kind: StepKind, nowMs: Milliseconds, batchSize: number, work: StepWork): StepPlan {
    const plan = this.#plan;
    plan.kind = kind;
    plan.startMs = nowMs;
    plan.durationMs = this.#costModel.stepDurationMs(work);
    plan.batchSize = batchSize;
    plan.mixedDecodeSequences = 0;
    plan.newRequests = 0;
    plan.newPromptTokens = 0;
    plan.newCachedTokens = 0;
    this.#step = plan;
    return plan;
  }
}

/** `tokens` cut down to whole pages. */
function pageFloor(tokens: number, pageSize: number): number {
  return tokens - (tokens % pageSize);
}

function removeFrom<T>(items: T[], item: T): void {
  const position = items.indexOf(item);
  if (position >= 0) items.splice(position, 1);
}

function validateConfig(config: EngineConfig): void {
  const positiveIntegers: [keyof EngineConfig, number][] = [
    ['maxRunningRequests', config.maxRunningRequests],
    ['maxTotalTokens', config.maxTotalTokens],
    ['contextLength', config.contextLength],
  ];
  for (const [name, value] of positiveIntegers) {
    if (!Number.isInteger(value) || value <= 0) {
      throw new ServelabError('INVALID_CONFIG', `${name} must be a positive integer, got ${String(value)}`);
    }
  }
  if (!Number.isInteger(config.pageSize) || config.pageSize <= 0) {
    throw new ServelabError(
      'INVALID_CONFIG',
      `pageSize must be a positive integer (KV tokens per page, SGLang's --page-size; 1 unless the server was started with another), got ${String(config.pageSize)}`,
    );
  }
  if (!Number.isInteger(config.chunkedPrefillSize)) {
    throw new ServelabError('INVALID_CONFIG', `chunkedPrefillSize must be an integer (<= 0 disables chunking)`);
  }
  if (!(config.scheduleConservativeness > 0)) {
    throw new ServelabError('INVALID_CONFIG', 'scheduleConservativeness must be a positive number (SGLang default 1.0)');
  }
}
