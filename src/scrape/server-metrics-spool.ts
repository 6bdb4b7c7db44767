import { closeSync, openSync, writeSync } from 'node:fs';
import type { Sample } from './scraper.js';
import { partialRows } from './server-metrics-rows.js';

/**
 * Appends each scrape to the partial file the moment it is taken, so that memory stays flat however long the run
 * and a scraper that dies later (out of memory, a crash) has lost nothing it had scraped. Synchronous writes: they run
 * on the scraper's own thread, a few kilobytes twice a second per endpoint.
 *
 * A write that fails (a full disk) stops the appending and is kept as `failure`; the scraping goes on unharmed.
 */
export class ServerMetricsSpool {
  readonly path: string;
  #fd: number | undefined;
  #rows = 0;
  #failure: string | undefined;

  constructor(path: string) {
    this.path = path;
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
    const text = partialRows(sample);
    try {
      const bytes = Buffer.from(text, 'utf8');
      let written = 0;
      while (written < bytes.length) written += writeSync(this.#fd, bytes, written, bytes.length - written);
      this.#rows += text.split('\n').length - 1;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      this.#failure = `could not append to ${this.path} (${code ?? (error as Error).message}); the rows written before are kept`;
      this.close();
    }
  }

  close(): void {
    if (this.#fd === undefined) return;
    const fd = this.#fd;
    this.#fd = undefined;
    closeSync(fd);
  }
}
