import type { EpochSeconds, Seconds } from './time.js';

/**
 * What one request tells about the offset between a server's clock and the client's (server − client, seconds).
 *
 * A server instant that the server stamped after it received the request cannot be earlier (on a common clock) than
 * the client's send, and one it stamped before it sent a byte cannot be later than the client's receipt of that byte.
 * So `lower ≤ offset ≤ upper`; `upper − lower` is the request's round trip minus the server's own time, and the
 * fastest round trips give the tightest bounds, as in NTP.
 */
export interface ClockOffsetSample {
  /** The client instant the sample belongs to (its send), to follow drift over a long run. */
  time: EpochSeconds;
  lower: Seconds;
  upper: Seconds;
}

/** How servelab modelled one server's clock against the client's. */
export type ClockOffsetModel = 'constant' | 'linear';

/** The estimated offset of one server's clock (server − client), from the run's own requests. */
export interface ClockOffsetEstimate {
  /** The server, as `requests.csv`'s `host` column names it. */
  host: string;
  /** Requests whose instants bounded the offset. */
  requestsUsed: number;
  /** Requests whose server instants contradict themselves (server time between them longer than the client's round trip). */
  requestsRejected: number;
  /**
   * Estimated offset in milliseconds, server clock minus client clock (positive: the server's clock is ahead), at the
   * run's first request; null when too few requests bounded it.
   */
  offsetMs: number | null;
  /** Half the width of the bounds the estimate rests on (ms): the true offset lies within offsetMs ± this, given symmetric network delays. */
  uncertaintyMs: number | null;
  /** Drift of the offset in parts per million (µs per s), when the run was long enough to measure it; else null. */
  driftPpm: number | null;
  model: ClockOffsetModel | null;
  /**
   * True when the bounds from every request agree with one offset (or one linear drift). False means the offset moved
   * in a way the model does not follow (a clock step mid-run) or the server's instants are not what they claim.
   */
  consistent: boolean;
  /** True when the server instants of the files were moved onto the client's clock by this estimate. */
  corrected: boolean;
  /** Why the estimate was or was not applied, in a sentence. */
  note: string;
}
