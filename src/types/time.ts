/**
 * Seconds since the Unix epoch, as a float with sub-microsecond resolution.
 *
 * Every timestamp in a record uses this one unit so that client readings (a monotonic clock anchored to the epoch once
 * per process) and server readings (the server's wall clock) can be subtracted directly. Files convert them to seconds
 * relative to the run's start.
 */
export type EpochSeconds = number;

/** A duration in seconds. */
export type Seconds = number;

/** A duration in milliseconds. */
export type Milliseconds = number;
