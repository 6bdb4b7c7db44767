import { closeSync, openSync, writeSync } from 'node:fs';
import { isDiskFull } from '../utils/write-failure.js';
import { ChangedRows } from './changed-rows.js';
import type { ScrapeBudget } from './scrape-budget.js';
import type { Sample } from './scraper.js';

export interface ServerMetricsSpoolOptions {
  /** Told of every byte appended, so that the scraping keeps to its budget. */
  budget?: ScrapeBudget;
  /** Told at once when appending stops (a full disk), with the reason. */
  onFailure?: (reason: string) => void;
}

/**
 * Appends each scrape to the partial file the moment it is taken, so that memory stays flat however long the run
 * and a scraper that dies later (out of memory, a crash) has lost nothing it had scraped. Only what changed is
 * written (ChangedRows). Synchronous writes: they run on the scraper's own thread, a few kilobytes at most per scrape.
 *
 * A write that fails (a full disk) stops the appending and is kept as `failure` (and told to `onFailure`); the
 * scraping goes on unharmed. It stops rather than trying again later: a failed write may have left half a row, and a
 * row appended after it would be joined to it; as the last line it is a torn tail, which every reader drops.
 */
export class ServerMetricsSpool {
  readonly path: string;
  readonly #options: ServerMetricsSpoolOptions;
  readonly #changedRows = new ChangedRows();
  #fd: number | undefined;
  #rows = 0;
  #failure: string | undefined;

  constructor(path: string, options: ServerMetricsSpoolOptions = {}) {
    this.path = path;
    this.#options = options;
    this.#fd = openSync(path, 'a');
  }

  get rows(): number {
    return this.#rows;
  }

  get failure(): string | undefined {
    return this.#failure;
  }

  append(sample: Sample): void {
    if (this.#fd === undefined) return;
    const { text, rows } = this.#changedRows.rows(sample);
    try {
      const bytes = Buffer.from(text, 'utf8');
      let written = 0;
      while (written < bytes.length) written += writeSync(this.#fd, bytes, written, bytes.length - written);
      this.#rows += rows;
      this.#options.budget?.record(bytes.length);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const disk = isDiskFull(error) ? 'the disk is full: ' : '';
      this.#failure = `${disk}could not append to ${this.path} (${code ?? (error as Error).message}); the rows written before are kept`;
      this.close();
      this.#options.onFailure?.(this.#failure);
    }
  }

  close(): void {
    if (this.#fd === undefined) return;
    const fd = this.#fd;
    this.#fd = undefined;
    closeSync(fd);
  }
}
