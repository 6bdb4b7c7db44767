import type { RunJournal } from '../types/run-journal.js';
import type { RunEvent, RunNotice } from '../types/run.js';

/** A failure's message, whatever was thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The notices and events a run gathers while it measures, each also handed to the journal at once so that a run
 * killed later still has them on disk.
 */
export class RunLog {
  readonly notices: RunNotice[] = [];
  readonly events: RunEvent[] = [];
  readonly #journal: RunJournal | undefined;

  constructor(journal: RunJournal | undefined) {
    this.#journal = journal;
  }

  notice(notice: RunNotice): void {
    this.notices.push(notice);
    this.#journal?.notice(notice);
  }

  event(event: RunEvent): void {
    this.events.push(event);
    this.#journal?.event(event);
  }

  /**
   * Runs a step beside the client (collecting the taps' records, writing scraped metrics) whose failure must not
   * cost the run: a failure becomes a notice from `source`, and `fallback` is returned.
   */
  async attempt<T>(source: string, what: string, step: () => Promise<T>, fallback: T): Promise<T> {
    try {
      return await step();
    } catch (error) {
      this.notice({ source, message: `${what}: ${messageOf(error)}` });
      return fallback;
    }
  }
}
