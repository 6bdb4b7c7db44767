import type { Clock } from '../../clock/clock.js';
import type { ClientOutcome } from '../../types/record.js';
import type { Milliseconds, Seconds } from '../../types/time.js';
import type { DecodeFailure } from './response-decoder.js';
import { malformed } from './response-decoder.js';

/**
 * When a stream's tokens arrived, in the client's monotonic milliseconds.
 *
 * Inter-token latencies follow SGLang's bench_serving: the gap between a chunk and the previous chunk that carried
 * tokens, spread evenly over the tokens the chunk added. The first token-carrying chunk sets the first-token time and
 * adds no gap. Monotonic readings (small numbers) keep sub-microsecond precision that epoch seconds (about 1.7e9) would
 * lose in a double.
 *
 * A server's count is not trusted: a count that passes the most tokens the request allows (`max_new_tokens` /
 * `max_tokens`) fails the request as `malformed_stream` before anything is stored, so the gaps kept per request are
 * bounded by the request's own limit whatever the server sends (one event claiming 300,000,000 tokens used to push
 * 300,000,000 gaps and abort the process). A count that goes backwards adds nothing and is counted in
 * `backwardSteps`: the request's own timing stands, and only its token count is unknowable (left empty, counted in
 * data_quality as `actualOutputTokens:backward_count`); callers keep counting from the highest count seen.
 */
export class TokenTimeline {
  firstTokenMs: Milliseconds | undefined = undefined;
  tokenCount = 0;
  /** Events whose count was below the one before (see above). */
  backwardSteps = 0;
  readonly interTokenLatencies: Seconds[] = [];
  #lastTokenMs: Milliseconds = 0;
  readonly #maxTokens: number;

  /** `maxTokens`: the most output tokens the request allows; absent means no limit was sent. */
  constructor(maxTokens?: number) {
    this.#maxTokens = maxTokens !== undefined && maxTokens > 0 ? maxTokens : Number.POSITIVE_INFINITY;
  }

  /** Records `tokens` more tokens at `nowMs`; returns a failure (storing nothing) for an impossible count. */
  add(tokens: number, nowMs: Milliseconds): DecodeFailure | undefined {
    if (Number.isInteger(tokens) && tokens < 0) {
      this.backwardSteps++;
      return undefined;
    }
    const failure = checkTokenCount(this.tokenCount, tokens, this.#maxTokens);
    if (failure !== undefined) return failure;
    if (tokens === 0) return undefined;
    if (this.firstTokenMs === undefined) {
      this.firstTokenMs = nowMs;
    } else {
      const gapSeconds = (nowMs - this.#lastTokenMs) / 1000 / tokens;
      for (let index = 0; index < tokens; index++) this.interTokenLatencies.push(gapSeconds);
    }
    this.#lastTokenMs = nowMs;
    this.tokenCount += tokens;
    return undefined;
  }
}

/** Why `added` more tokens after `counted` cannot be true of a request allowed `maxTokens`, or undefined if they can. */
export function checkTokenCount(counted: number, added: number, maxTokens: number): DecodeFailure | undefined {
  if (!Number.isInteger(added)) return malformed(`a token count that is not a whole number (${counted} + ${added})`);
  if (added < 0) return malformed(`the token count went backwards, from ${counted} to ${counted + added}`);
  if (counted + added > maxTokens) {
    return malformed(`the token count jumped to ${counted + added}, beyond the ${maxTokens} tokens the request allows`);
  }
  return undefined;
}

/**
 * The client-side times every protocol reports the same way: a stream's first token and gaps from its timeline; a
 * whole (non-streamed) answer's tokens all arrive with its body, so its first token time is its finish time
 * (bench_serving's ttft = latency).
 */
export function fillClientTiming(outcome: ClientOutcome, clock: Clock, timeline: TokenTimeline, stream: boolean, finishMs: Milliseconds | undefined): void {
  if (stream) {
    if (timeline.firstTokenMs !== undefined) outcome.firstTokenTime = clock.toEpochSeconds(timeline.firstTokenMs);
    if (timeline.tokenCount > 0) outcome.interTokenLatencies = timeline.interTokenLatencies;
  } else if (finishMs !== undefined) {
    outcome.firstTokenTime = clock.toEpochSeconds(finishMs);
  }
  if (finishMs !== undefined) outcome.finishTime = clock.toEpochSeconds(finishMs);
  if (timeline.backwardSteps > 0) outcome.dataQuality = 'actualOutputTokens:backward_count';
}
