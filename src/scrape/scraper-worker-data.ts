import type { Milliseconds } from '../types/time.js';
import type { Sample } from './scraper.js';

/** What the scraper's worker thread is started with. */
export interface ScraperWorkerData {
  urls: string[];
  intervalMs: Milliseconds;
  /** The main thread's clock: the epoch (ms) at its `nowMs()` zero, and its `performance.timeOrigin`. */
  epochAtMainZeroMs: number;
  mainTimeOrigin: number;
}

/** What the scraper's worker thread sends: `ready` after its first scrapes, then its samples when told to stop. */
export type FromScraperWorker = { type: 'ready' } | { type: 'samples'; samples: Sample[] };
