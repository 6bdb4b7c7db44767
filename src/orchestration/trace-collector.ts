import { fetchTapRecords } from '../routing/tap/tap-records-client.js';
import type { TapOverhead, TapRecord } from '../types/routing.js';
import type { Milliseconds } from '../types/time.js';

/** How often the trace is fetched while the run goes on: what a tracer that dies later takes with it. */
const TRACE_POLL_INTERVAL_MS: Milliseconds = 2_000;

export interface CollectedTrace {
  records: TapRecord[];
  overhead?: TapOverhead;
  /** Why the last fetches failed (the taps or the router died): the records are those fetched before. */
  failure?: string;
}

export interface TraceCollector {
  /** Stops polling, fetches what is left, and returns every record fetched, with the failure if the tracer is gone. */
  finish(): Promise<CollectedTrace>;
  /** Stops polling, for a run that ends in an error. */
  stop(): void;
}

/**
 * Fetches the routing trace (the taps', or the builtin router's own) page by page while the run goes on, from where
 * the last fetch stopped (`?offset=`), instead of all at once after the load: a taps process or router that dies
 * mid-run used to take every record's `router_send_time` and `host` with it, also those of requests that had finished
 * long before. A failed fetch is tried again at the next tick; the records fetched stay either way.
 */
export function collectTraceDuringRun(url: string, intervalMs: Milliseconds = TRACE_POLL_INTERVAL_MS): TraceCollector {
  const records: TapRecord[] = [];
  let overhead: TapOverhead | undefined;
  let failure: string | undefined;
  let fetching: Promise<void> = Promise.resolve();
  const fetchNew = async (): Promise<void> => {
    try {
      for (;;) {
        const page = await fetchTapRecords(url, records.length);
        if (page.overhead !== undefined) overhead = page.overhead;
        for (const record of page.records) records.push(record);
        failure = undefined;
        if (page.records.length === 0 || records.length >= page.total) return;
      }
    } catch (error) {
      failure = (error as Error).message;
    }
  };
  const timer = setInterval(() => {
    fetching = fetching.then(fetchNew);
  }, intervalMs);
  // Never keeps a finished process alive.
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
    },
    async finish() {
      clearInterval(timer);
      await fetching;
      await fetchNew();
      const collected: CollectedTrace = { records };
      if (overhead !== undefined) collected.overhead = overhead;
      if (failure !== undefined) collected.failure = failure;
      return collected;
    },
  };
}
