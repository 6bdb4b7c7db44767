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
