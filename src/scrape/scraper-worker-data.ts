import type { Milliseconds } from '../types/time.js';

/** What the scraper's worker thread is started with. */
export interface ScraperWorkerData {
  urls: string[];
  intervalMs: Milliseconds;
  /** The main thread's clock: the epoch (ms) at its `nowMs()` zero, and its `performance.timeOrigin`. */
  epochAtMainZeroMs: number;
  mainTimeOrigin: number;
}
