/**
 * A seeded pseudo-random generator (sfc32, seeded through splitmix32) so every workload, arrival schedule and simulated
 * engine is reproducible from one integer seed. Math.random cannot be seeded, hence this small generator.
 */
export class SeededRandom {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: number) {
    let state = seed >>> 0;
    const next = (): number => {
      state = (state + 0x9e3779b9) >>> 0;
      let z = state;
      z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
      z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
      return (z ^ (z >>> 15)) >>> 0;
    };
    this.#a = next();
    this.#b = next();
    this.#c = next();
    this.#d = next();
    for (let index = 0; index < 12; index++) this.nextUint32();
  }

  /** A uniformly distributed unsigned 32-bit integer. */
  nextUint32(): number {
    const a = this.#a;
    const b = this.#b;
    const c = this.#c;
    const d = this.#d;
    const t = (((a + b) >>> 0) + d) >>> 0;
    this.#d = (d + 1) >>> 0;
    this.#a = b ^ (b >>> 9);
    this.#b = (c + (c << 3)) >>> 0;
    this.#c = ((c << 21) | (c >>> 11)) >>> 0;
    this.#c = (this.#c + t) >>> 0;
    return t;
  }

  /** Uniform in [0, 1) with 53 bits of resolution. */
  next(): number {
    const high = this.nextUint32() >>> 5;
    const low = this.nextUint32() >>> 6;
    return (high * 67108864 + low) / 9007199254740992;
  }

  /** Uniform integer in [min, max] inclusive. */
  integer(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /**
   * Fills `target` with uniform integers in [min, max], the very values (and generator state after) that
   * `target.length` calls of `integer(min, max)` give. A hot path: a million 512-token random-ids prompts are half a
   * billion draws, and keeping the state in locals for the loop (instead of a private-field round trip per draw)
   * makes it several times faster.
   */
  fillIntegers(target: { length: number; [index: number]: number }, min: number, max: number): void {
    const span = max - min + 1;
    let a = this.#a;
    let b = this.#b;
    let c = this.#c;
    let d = this.#d;
    for (let index = 0; index < target.length; index++) {
      // Two sfc32 steps, as in nextUint32, then next()'s 53-bit fraction.
      let t = (((a + b) >>> 0) + d) >>> 0;
      d = (d + 1) >>> 0;
      a = b ^ (b >>> 9);
      b = (c + (c << 3)) >>> 0;
      c = (((c << 21) | (c >>> 11)) + t) >>> 0;
      const high = t >>> 5;
      t = (((a + b) >>> 0) + d) >>> 0;
      d = (d + 1) >>> 0;
      a = b ^ (b >>> 9);
      b = (c + (c << 3)) >>> 0;
      c = (((c << 21) | (c >>> 11)) + t) >>> 0;
      const low = t >>> 6;
      target[index] = min + Math.floor(((high * 67108864 + low) / 9007199254740992) * span);
    }
    this.#a = a;
    this.#b = b;
    this.#c = c;
    this.#d = d;
  }

  /** Exponentially distributed with the given rate (mean 1 / rate). */
  exponential(rate: number): number {
    // 1 - next() lies in (0, 1], so the logarithm is finite.
    return -Math.log(1 - this.next()) / rate;
  }

  /** Standard normal (Box-Muller). */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Gamma-distributed with the given shape and scale (Marsaglia-Tsang). */
  gamma(shape: number, scale: number): number {
    if (shape < 1) {
      const boost = Math.pow(this.next() || Number.MIN_VALUE, 1 / shape);
      return this.gamma(shape + 1, scale) * boost;
    }
    const d = shape - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      let x: number;
      let v: number;
      do {
        x = this.normal();
        v = 1 + c * x;
      } while (v <= 0);
      v = v * v * v;
      const u = this.next();
      if (u < 1 - 0.0331 * x * x * x * x) return d * v * scale;
      if (Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v * scale;
    }
  }

  /** A new generator derived from this one, for an independent stream (e.g. one per node). */
  fork(): SeededRandom {
    return new SeededRandom(this.nextUint32());
  }

  /** Shuffles an array in place (Fisher-Yates). */
  shuffle<T>(items: T[]): T[] {
    for (let index = items.length - 1; index > 0; index--) {
      const other = Math.floor(this.next() * (index + 1));
      const held = items[index] as T;
      items[index] = items[other] as T;
      items[other] = held;
    }
    return items;
  }
}
