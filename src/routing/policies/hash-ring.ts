import { createHash } from 'node:crypto';

/** smg places each worker at this many points on the ring (model_gateway/src/worker/hash_ring.rs). */
export const VIRTUAL_NODES_PER_WORKER = 150;

/**
 * A 64-bit ring position: the first 8 bytes of a digest, little-endian. smg uses BLAKE3, which Node does not ship;
 * SHA-256 spreads keys as evenly, so the ring behaves the same, though a given key may land on another worker than
 * it would in smg.
 */
export function ringPosition(text: string): bigint {
  return createHash('sha256').update(text).digest().readBigUInt64LE(0);
}

/**
 * A consistent-hash ring over worker URLs, as smg builds one: `VIRTUAL_NODES_PER_WORKER` points per worker at
 * `hash("{url}#{n}")`; a key goes to the first point at or after its own hash (wrapping round), skipping workers the
 * caller cannot use. Adding or removing a worker moves only the keys on its arcs.
 */
export class HashRing {
  readonly #points: { position: bigint; url: string }[] = [];
  readonly urlsKey: string;

  constructor(urls: readonly string[]) {
    this.urlsKey = urls.join('\n');
    for (const url of urls) {
      for (let node = 0; node < VIRTUAL_NODES_PER_WORKER; node++) {
        this.#points.push({ position: ringPosition(`${url}#${node}`), url });
      }
    }
    this.#points.sort((first, second) => (first.position < second.position ? -1 : first.position > second.position ? 1 : 0));
  }

  /** The first usable worker clockwise from the key's position, or undefined when none is usable. */
  find(key: string, usable: (url: string) => boolean): string | undefined {
    const points = this.#points;
    if (points.length === 0) return undefined;
    const position = ringPosition(key);
    let low = 0;
    let high = points.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((points[middle] as { position: bigint }).position < position) low = middle + 1;
      else high = middle;
    }
    const checked = new Set<string>();
    for (let offset = 0; offset < points.length; offset++) {
      const url = (points[(low + offset) % points.length] as { url: string }).url;
      if (checked.has(url)) continue;
      checked.add(url);
      if (usable(url)) return url;
    }
    return undefined;
  }
}

/** Keeps one ring for the current set of worker URLs, rebuilding it only when that set changes. */
export class RingCache {
  #ring: HashRing | undefined;

  ringFor(urls: readonly string[]): HashRing {
    const key = urls.join('\n');
    if (this.#ring === undefined || this.#ring.urlsKey !== key) this.#ring = new HashRing(urls);
    return this.#ring;
  }
}
