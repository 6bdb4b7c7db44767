import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { sglangMetricsPage } from '../../bench/sglang-metrics-page.js';
import { DEFAULT_SCRAPE_BUDGET, type ScrapeBudgetLimits } from '../../src/scrape/scrape-budget.js';
import { readServerMetrics } from '../../src/scrape/server-metrics-file.js';
import { SERVER_METRICS_PARTIAL } from '../../src/scrape/server-metrics-rows.js';
import { startSpooledScraper } from '../../src/scrape/spooled-scraper.js';
import { fakeTimeClock, useFakeTime, useRealTime } from '../helpers/fake-time.js';

const HOUR_MS = 3_600_000;

/**
 * Two loopback servers serving a whole default SGLang page under load (every value moves between scrapes: the worst
 * case for a table of changes), scraped on fake time: the scraper's timers are vitest's and its clock reads their
 * `Date`, so an hour of scraping runs in seconds and the bytes per hour come from the file and the clock, never from
 * how fast this machine is.
 */
describe('server metrics on disk stay under their budget', () => {
  const servers: Server[] = [];
  const urls: string[] = [];
  let directory: string;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'servelab-scrape-budget-'));
    for (let index = 0; index < 2; index++) {
      let scrapes = 0;
      const server = createServer((request, response) => {
        response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(sglangMetricsPage(scrapes++, true));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      servers.push(server);
      urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`);
    }
  });
  afterEach(() => useRealTime());
  afterAll(async () => {
    for (const server of servers) await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(directory, { recursive: true, force: true });
  });

  /**
   * Scrapes for `durationMs` of fake time, one round at a time (each round's answers are in before time moves on, so
   * a busy machine turns no scrape into a timeout); after every round, `check` sees the partial file's bytes and the
   * fake time elapsed. Returns the notices.
   */
  async function scrapeFor(durationMs: number, budget: ScrapeBudgetLimits, check: (bytes: number, elapsedMs: number) => void): Promise<string[]> {
    useFakeTime();
    const clock = fakeTimeClock();
    const runDirectory = await mkdtemp(join(directory, 'run-'));
    const partialPath = join(runDirectory, SERVER_METRICS_PARTIAL);
    const notices: string[] = [];
    const { scraper, spool } = startSpooledScraper({ urls, clock, partialPath, budget, notify: (message) => notices.push(message) });
    try {
      await scraper.settled();
      while (clock.nowMs() < durationMs) {
        await vi.advanceTimersToNextTimerAsync();
        await scraper.settled();
        check((await stat(partialPath)).size, clock.nowMs());
      }
      expect(spool.failure).toBeUndefined();
    } finally {
      await scraper.stop();
      spool.close();
    }
    // The samples were kept, not dropped: the charts' reader finds scrapes to the end.
    const samples = await readServerMetrics(runDirectory, clock.nowEpochSeconds() - clock.nowMs() / 1000, (name) => name === 'sglang:num_running_reqs');
    expect(samples.at(-1)?.time).toBeGreaterThan((durationMs - 60_000) / 1000);
    return notices;
  }

  it('writes at most 100 MB an hour (and 10 MB ahead), all servers together, however heavy the pages', async () => {
    // Two whole SGLang pages a round, written whole since every value moved: about 66 KB; the table before wrote that
    // every 500 ms (480 MB an hour for these two servers).
    const { bytesPerHour, burstBytes, baseIntervalMs } = DEFAULT_SCRAPE_BUDGET;
    const slackBytes = 2 * 70_000;
    const rounds: { bytes: number; elapsedMs: number }[] = [];
    await scrapeFor(HOUR_MS, DEFAULT_SCRAPE_BUDGET, (bytes, elapsedMs) => {
      // Every stretch from the start: never more than the burst ahead of the rate.
      expect(bytes, `${bytes} bytes after ${elapsedMs} ms of scraping`).toBeLessThanOrEqual(burstBytes + (bytesPerHour * elapsedMs) / HOUR_MS + slackBytes);
      rounds.push({ bytes, elapsedMs });
    });
    const last = rounds.at(-1) as { bytes: number; elapsedMs: number };
    expect(last.bytes).toBeLessThanOrEqual(burstBytes + bytesPerHour + slackBytes);
    // The first minute, within the burst, kept every scrape.
    const firstMinute = rounds.filter((round) => round.elapsedMs <= 60_000);
    expect(firstMinute.length).toBeGreaterThanOrEqual(60_000 / baseIntervalMs - 1);
    // The last half hour, the burst long spent, at the rate: under it, and not far under (the interval backs off only
    // as far as it must).
    const halfHourBefore = rounds.find((round) => round.elapsedMs >= last.elapsedMs - HOUR_MS / 2) as { bytes: number; elapsedMs: number };
    const rate = ((last.bytes - halfHourBefore.bytes) / (last.elapsedMs - halfHourBefore.elapsedMs)) * HOUR_MS;
    expect(rate).toBeLessThanOrEqual(bytesPerHour * 1.01);
    expect(rate).toBeGreaterThan(bytesPerHour * 0.9);
  }, 180_000);

  it('past its cap, says so once and keeps scraping at the lower rate', async () => {
    const budget: ScrapeBudgetLimits = { baseIntervalMs: 500, bytesPerHour: 100e6, burstBytes: 0.5e6, capBytes: 2e6, bytesPerHourAfterCap: 10e6 };
    let capReachedAt: { bytes: number; elapsedMs: number } | undefined;
    let last = { bytes: 0, elapsedMs: 0 };
    const notices = await scrapeFor(30 * 60_000, budget, (bytes, elapsedMs) => {
      if (capReachedAt === undefined && bytes >= budget.capBytes) capReachedAt = { bytes, elapsedMs };
      last = { bytes, elapsedMs };
    });
    expect(notices).toEqual([expect.stringMatching(/reached their cap of 2 MB: from now on they grow by at most 10 MB an hour/)]);
    expect(capReachedAt).toBeDefined();
    const after = capReachedAt as { bytes: number; elapsedMs: number };
    // The cap came after about a minute (2 MB at 100 MB an hour, half a megabyte ahead); the rest grew at the lower rate.
    expect(last.elapsedMs - after.elapsedMs).toBeGreaterThan(25 * 60_000);
    const rateAfter = ((last.bytes - after.bytes) / (last.elapsedMs - after.elapsedMs)) * HOUR_MS;
    expect(rateAfter).toBeLessThanOrEqual(budget.bytesPerHourAfterCap * 1.05);
    expect(rateAfter).toBeGreaterThan(budget.bytesPerHourAfterCap * 0.8);
  }, 120_000);
});
