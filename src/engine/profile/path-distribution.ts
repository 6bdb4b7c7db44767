import type { ServingLatency, ServingPathDistribution } from '../../types/engine.js';
import type { Milliseconds } from '../../types/time.js';
import { SeededRandom } from '../../utils/random.js';

/** The probabilities calibration keeps the path's quantiles at. */
export const PATH_QUANTILES: readonly number[] = [0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99];

/** Fewest requests a stage's quantiles are read from; with fewer, calibration keeps only the median. */
export const MIN_PATH_SAMPLES = 20;

/** `samples` at each probability (linear between order statistics); null for an empty list. */
export function quantilesOf(samples: readonly number[], probabilities: readonly number[] = PATH_QUANTILES): number[] | null {
  if (samples.length === 0) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  return probabilities.map((p) => {
    const position = p * (sorted.length - 1);
    const low = Math.floor(position);
    const high = Math.min(sorted.length - 1, low + 1);
    return Math.max(0, (sorted[low] as number) + ((sorted[high] as number) - (sorted[low] as number)) * (position - low));
  });
}

/**
 * The value at probability `u` of a distribution known by its quantiles: linear between them, held at the first below
 * the first probability and at the last above the last (a stage is never drawn beyond what was measured).
 */
export function valueAt(quantiles: readonly number[], values: readonly number[], u: number): number {
  if (u <= (quantiles[0] as number)) return values[0] as number;
  for (let index = 1; index < quantiles.length; index++) {
    const high = quantiles[index] as number;
    if (u <= high) {
      const low = quantiles[index - 1] as number;
      const weight = (u - low) / (high - low);
      return (values[index - 1] as number) + ((values[index] as number) - (values[index - 1] as number)) * weight;
    }
  }
  return values[values.length - 1] as number;
}

/**
 * Each request's delivery drawn from a profile's measured path (`servingLatency.distribution`), with a generator of
 * its own seeded from the run's seed, so that a run is the same for one seed and no other draw (workload, engine)
 * moves. On a loaded host the path from the server's stamp to the client has a tail (first token to the client 1.0 ms
 * after the server's stamp at the median, 18 ms at p90 on a sim server at 0.2x, docs/simulated-engine.md); a constant
 * put the twin's TTFT p90 19-31% low there with the server's TTFT p90 within 3%. Ingress stays its median: it delays
 * the engine's view of a request, and the twin's engine clock runs one constant offset behind the client's.
 */
export class PathDraws {
  readonly #random: SeededRandom;

  constructor(seed: number) {
    // A stream apart from every other seeded one (the constant only decorrelates it from seed itself).
    this.#random = new SeededRandom((seed ^ 0x7a1d_3e55) >>> 0);
  }

  /** One request's delivery: drawn where the profile has a distribution, else its constant. */
  deliveryMs(constantMs: Milliseconds, distribution: ServingPathDistribution | undefined): Milliseconds {
    if (distribution === undefined) return constantMs;
    return valueAt(distribution.quantiles, distribution.deliveryMs, this.#random.next());
  }
}

/**
 * How calibration reads the path: delivery is the client's time for a request beyond the server's own
 * (request_received_ts to request_finished_ts), a difference that needs no clock shared by client and server and so
 * holds the network both ways. The twin adds it after the last token, so the way there is zero here, not missing.
 */
export const CALIBRATED_PATH = {
  networkMs: 0,
  source: "calibrated on the idle server: deliveryMs is the client's request time beyond the server's own (request_received_ts to request_finished_ts), so it holds the network both ways and networkMs is 0",
} as const satisfies Partial<ServingLatency>;

/**
 * The idle server's path: the constants are the medians, as before; the distribution keeps the quantiles where enough
 * requests were timed (the path probe's and the batch-1 sweep's, one at a time on the idle server).
 */
export function servingLatencyFromSamples(ingressSamplesMs: readonly number[], deliverySamplesMs: readonly number[]): ServingLatency {
  const constants = { ingressMs: Math.max(0, medianOf(ingressSamplesMs)), deliveryMs: Math.max(0, medianOf(deliverySamplesMs)), ...CALIBRATED_PATH };
  const ingressQuantiles = quantilesOf(ingressSamplesMs);
  const deliveryQuantiles = quantilesOf(deliverySamplesMs);
  if (ingressQuantiles === null || deliveryQuantiles === null || deliverySamplesMs.length < MIN_PATH_SAMPLES) return constants;
  return {
    ...constants,
    distribution: {
      quantiles: [...PATH_QUANTILES],
      ingressMs: ingressQuantiles,
      deliveryMs: deliveryQuantiles,
      ingressSamples: ingressSamplesMs.length,
      deliverySamples: deliverySamplesMs.length,
    },
  };
}

function medianOf(samples: readonly number[]): number {
  return (quantilesOf(samples, [0.5]) ?? [0])[0] as number;
}
