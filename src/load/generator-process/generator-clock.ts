import { estimateClockOffset, offsetAt, type OffsetFit } from '../../analysis/clock-offset/estimate-clock-offset.js';
import type { ClockOffsetSample } from '../../types/clock-offset.js';
import type { GeneratorClockEstimate } from '../../types/load.js';
import type { RequestRecord } from '../../types/record.js';
import type { EpochSeconds } from '../../types/time.js';
import type { ClockStamps } from './generator-protocol.js';

/**
 * The instants a load generator stamps on its own host's clock (the pacer's send, the client's times). The scheduled
 * time is not among them: the coordinator sets it from the one schedule (t0 + offset), on its own clock.
 */
export const GENERATOR_CLOCK_FIELDS = ['dispatchTime', 'arrivalTime', 'firstTokenTime', 'finishTime'] as const satisfies ReadonlyArray<keyof RequestRecord>;

/**
 * The estimator's settings for exchanges. Requests to a server are many and loose (their bounds are round trips of
 * whole requests), so the estimator's defaults pool 30 s windows of them; exchanges are few and tight (a fraction of a
 * millisecond), so a window of 30 s would hold more drift than its bounds allow (100 ppm is 3 ms) and never give a
 * point. Here each exchange more than a second from the last is a window of its own: the drift line goes through the
 * exchanges' own midpoints, weighted by their tightness, and is taken only when it narrows the bounds to under half the
 * constant model's (the estimator's own rule).
 */
const EXCHANGE_ESTIMATE = { minimumSamples: 1, windowSeconds: 1, minimumWindowSamples: 1 } as const;

/**
 * One exchange as the estimator's bounds (NTP's four timestamps, in epoch milliseconds): the coordinator sent at t1
 * and received the answer at t4 on its clock; the generator received at t2 and answered at t3 on its own. With θ =
 * generator − coordinator and delays d ≥ 0 each way, t2 = t1 + d₁ + θ and t4 = t3 − θ + d₂, so t3 − t4 ≤ θ ≤ t2 − t1.
 */
export function exchangeSample(sentEpochMs: number, stamps: ClockStamps, receivedEpochMs: number): ClockOffsetSample {
  return {
    time: sentEpochMs / 1000,
    lower: (stamps.sentEpochMs - receivedEpochMs) / 1000,
    upper: (stamps.receivedEpochMs - sentEpochMs) / 1000,
  };
}

/**
 * What the run knows of one generator's clock: every exchange it made (at start, periodically while the load runs,
 * and at the end), fitted by the same estimator as the servers' clocks (src/analysis/clock-offset/), constant or with a
 * drift line. Unlike a server's, the generator's offset is always applied: its instants are the run's client times, and
 * the exchanges measure it directly rather than infer it from requests.
 */
export class GeneratorClock {
  readonly #samples: ClockOffsetSample[] = [];
  #fit: OffsetFit | null = null;
  #sharedAnchor = false;

  /**
   * The generator stamps on this process's own host anchor (it was started on this host and inherited it: clock.ts):
   * the offset is exactly zero and no estimate is applied. The exchanges still run (they watch that the generator is
   * alive), and each must then bracket zero, or the estimate says it is not consistent.
   */
  sharesAnchor(): void {
    this.#sharedAnchor = true;
  }

  add(sample: ClockOffsetSample): void {
    this.#samples.push(sample);
    const result = estimateClockOffset(this.#samples, EXCHANGE_ESTIMATE);
    this.#fit = result.model === null ? null : result;
  }

  get exchanges(): number {
    return this.#samples.length;
  }

  /** The offset (ms) at a coordinator instant; 0 before any exchange. */
  offsetMsAt(coordinatorTime: EpochSeconds): number {
    return this.#sharedAnchor || this.#fit === null ? 0 : offsetAt(this.#fit, coordinatorTime) * 1000;
  }

  /** A generator instant on the coordinator's clock. */
  toCoordinator(generatorTime: EpochSeconds): EpochSeconds {
    if (this.#sharedAnchor || this.#fit === null) return generatorTime;
    // The fit is a function of coordinator time: the generator instant less the offset is that time to well under a
    // microsecond's worth of drift.
    return generatorTime - offsetAt(this.#fit, generatorTime - this.#fit.offsetSeconds);
  }

  /** A copy of the record with the generator's instants moved onto the coordinator's clock. */
  correct(record: RequestRecord): RequestRecord {
    const copy: RequestRecord = { ...record };
    for (const field of GENERATOR_CLOCK_FIELDS) {
      const instant = record[field];
      if (instant !== undefined) copy[field] = this.toCoordinator(instant);
    }
    return copy;
  }

  estimate(): GeneratorClockEstimate {
    const fit = this.#fit;
    const widths = this.#samples.map((sample) => sample.upper - sample.lower);
    const round = (value: number): number => Math.round(value * 1e4) / 1e4;
    if (this.#sharedAnchor) {
      // A microsecond of slack: the stamps travel as float epoch milliseconds.
      const bracketsZero = this.#samples.every((sample) => sample.lower <= 1e-6 && sample.upper >= -1e-6);
      return {
        offsetMs: 0,
        uncertaintyMs: 0,
        driftPpm: null,
        model: 'constant',
        consistent: bracketsZero,
        exchanges: this.#samples.length,
        bestRoundTripMs: widths.length === 0 ? null : round(Math.min(...widths) * 1000),
        sharedAnchor: true,
      };
    }
    return {
      sharedAnchor: false,
      offsetMs: fit === null ? null : round(fit.offsetSeconds * 1000),
      uncertaintyMs: fit === null ? null : round(fit.uncertaintySeconds * 1000),
      driftPpm: fit === null || fit.model !== 'linear' ? null : round(fit.driftPerSecond * 1e6),
      model: fit === null ? null : fit.model,
      consistent: fit === null ? true : fit.consistent,
      exchanges: this.#samples.length,
      bestRoundTripMs: widths.length === 0 ? null : round(Math.min(...widths) * 1000),
    };
  }
}
