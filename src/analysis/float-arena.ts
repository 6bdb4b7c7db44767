/**
 * One large allocation carved into many typed arrays.
 *
 * Why: V8 runs a full garbage collection each time tens of megabytes of new ArrayBuffers appear, and with a million
 * records in the heap each full collection costs about half a second. Analysis needs a few hundred megabytes of
 * scratch columns; taking them from one buffer triggers at most one collection instead of one per column.
 * Views are never handed out twice, so they start zeroed; when the arena is exhausted, `take` falls back to a fresh
 * array (correct, only slower).
 */
export class Float64Arena {
  readonly #buffer: Float64Array;
  #used = 0;

  constructor(capacity: number) {
    this.#buffer = new Float64Array(Math.max(0, Math.ceil(capacity)));
  }

  take(length: number): Float64Array {
    if (this.#used + length > this.#buffer.length) return new Float64Array(length);
    const view = this.#buffer.subarray(this.#used, this.#used + length);
    this.#used += length;
    return view;
  }

  takeInt32(length: number): Int32Array {
    const doubles = Math.ceil(length / 2);
    if (this.#used + doubles > this.#buffer.length) return new Int32Array(length);
    const view = new Int32Array(this.#buffer.buffer, this.#buffer.byteOffset + this.#used * 8, length);
    this.#used += doubles;
    return view;
  }
}

/** Allocates like the arena would, for callers that have none. */
export function takeFloat64(arena: Float64Arena | undefined, length: number): Float64Array {
  return arena ? arena.take(length) : new Float64Array(length);
}
