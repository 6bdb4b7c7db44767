import type { Clock } from '../../clock/clock.js';
import type { ClientOutcome } from '../../types/record.js';
import type { Milliseconds, Seconds } from '../../types/time.js';

/**
 * When a stream's tokens arrived, in the client's monotonic milliseconds.
 *
 * Inter-token latencies follow SGLang's bench_serving: the gap between a chunk and the previous chunk that carried
 * tokens, spread evenly over the tokens the chunk added. The first token-carrying chunk sets the first-token time and
 * adds no gap. Monotonic readings (small numbers) keep sub-microsecond precision that epoch seconds (about 1.7e9) would
 * lose in a double.
 */
export class TokenTimeline {
  firstTokenMs: Milliseconds | undefined = undefined;
  tokenCount = 0;
  readonly interTokenLatencies: Seconds[] = [];
  #lastTokenMs: Milliseconds = 0;

  add(tokens: number, nowMs: Milliseconds): void {
    if (this.firstTokenMs === undefined) {
      this.firstTokenMs = nowMs;
    } else {
      const gapSeconds = (nowMs - this.#lastTokenMs) / 1000 / tokens;
      for (let index = 0; index < tokens; index++) this.interTokenLatencies.push(gapSeconds);
    }
    this.#lastTokenMs = nowMs;
    this.tokenCount += tokens;
  }
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
}
