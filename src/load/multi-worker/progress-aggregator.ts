import type { LoadProgress } from '../../types/load.js';
import type { Milliseconds } from '../../types/time.js';

/** Sums the workers' latest progress reports into one snapshot of the whole run. */
export class ProgressAggregator {
  readonly #total: number;
  readonly #latest: (LoadProgress | undefined)[];

  constructor(total: number, workerCount: number) {
    this.#total = total;
    this.#latest = new Array<LoadProgress | undefined>(workerCount);
  }

  /** Keeps a worker's newest report (each replaces the one before: reports are cumulative). */
  update(worker: number, progress: LoadProgress): void {
    this.#latest[worker] = progress;
  }

  /**
   * The run as a whole. `elapsedMs` is given by the caller (time since the shared `t0`, on its own clock); the send lag
   * is the worst of the workers' newest sends, so that one lagging worker shows.
   */
  snapshot(phase: LoadProgress['phase'], elapsedMs: Milliseconds): LoadProgress {
    const snapshot: LoadProgress = {
      phase,
      total: this.#total,
      sent: 0,
      completed: 0,
      failed: 0,
      inFlight: 0,
      waitingForConcurrency: 0,
      elapsedMs,
      lastSendLagMs: 0,
    };
    for (const progress of this.#latest) {
      if (progress === undefined) continue;
      snapshot.sent += progress.sent;
      snapshot.completed += progress.completed;
      snapshot.failed += progress.failed;
      snapshot.inFlight += progress.inFlight;
      snapshot.waitingForConcurrency += progress.waitingForConcurrency;
      snapshot.lastSendLagMs = Math.max(snapshot.lastSendLagMs, progress.lastSendLagMs);
    }
    return snapshot;
  }
}
