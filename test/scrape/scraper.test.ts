import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, anchoredSystemClock, systemClock } from '../../src/clock/clock.js';
import { collectServerMetrics } from '../../src/orchestration/server-metrics.js';
import { startScraper } from '../../src/scrape/scraper.js';
import { parseServerMetrics, seriesOf } from '../../src/scrape/server-metrics-file.js';

describe('metrics scraper', () => {
  let server: Server;
  let baseUrl: string;
  let scrapes = 0;
  let directory: string;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'servelab-scrape-'));
    server = createServer((request, response) => {
      if (request.url !== '/metrics') {
        response.writeHead(404).end('not found');
        return;
      }
      scrapes++;
      response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
      response.end(
        `# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{tp_rank="0"} ${scrapes}.0\nsglang:num_running_reqs{tp_rank="1"} 1.0\nother_metric 5\n`,
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(directory, { recursive: true, force: true });
  });

  it('polls at the interval, stamps samples on the run clock and writes server-metrics.jsonl', async () => {
    const outputPath = join(directory, 'server-metrics.jsonl');
    const t0 = systemClock.nowEpochSeconds();
    // A generous timeout: this test is about polling and stamping, and the default (100 ms here) can pass on a machine
    // busy with other test files, which turns a sample into a timeout.
    const scraper = startScraper({ urls: [`${baseUrl}/metrics`], intervalMs: 25, timeoutMs: 10_000, clock: systemClock, outputPath, t0, keepMetric: (name) => name.startsWith('sglang:') });
    // Stopped after its third scrape, however loaded the machine (no wall-clock window to miss).
    for (let waited = 0; scrapes < 3 && waited < 10_000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
    const samples = await scraper.stop();
    expect(samples.length).toBeGreaterThanOrEqual(3);
    for (let index = 1; index < samples.length; index++) expect(samples[index]?.time).toBeGreaterThan(samples[index - 1]?.time as number);
    expect(samples.every((sample) => sample.ok && sample.metrics.every((metric) => metric.name === 'sglang:num_running_reqs'))).toBe(true);

    const stored = parseServerMetrics(await readFile(outputPath, 'utf8'));
    expect(stored).toHaveLength(samples.length);
    expect(stored[0]?.time).toBeGreaterThanOrEqual(0);
    // Summed over tp ranks: the first scrape of this test saw running = n + 1 for its scrape count n.
    const points = seriesOf(stored, 'sglang:num_running_reqs').get(`${baseUrl}/metrics`) ?? [];
    expect(points).toHaveLength(samples.length);
    expect((points[1]?.[1] as number) - (points[0]?.[1] as number)).toBe(1);
    // No scrape after stop.
    const scrapesAtStop = scrapes;
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(scrapes).toBe(scrapesAtStop);
  });

  it('records failures as samples and uses the injected clock for times', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/metrics`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const clock = new ManualClock(0, 1_700_000_000_000);
    const scraper = startScraper({ urls: [`${baseUrl}/nope`, closedUrl], intervalMs: 1000, clock });
    const samples = await scraper.stop();
    expect(samples).toHaveLength(2);
    const byUrl = Object.fromEntries(samples.map((sample) => [sample.url, sample]));
    expect(byUrl[`${baseUrl}/nope`]).toMatchObject({ ok: false, error: 'HTTP 404', time: 1_700_000_000 });
    expect(byUrl[closedUrl]).toMatchObject({ ok: false, error: 'ECONNREFUSED', metrics: [] });
  });

  it('polls on a worker thread during a run, with sample times on the run clock, and writes them at the end', async () => {
    // A run's clock is anchored anew (not the process's systemClock): the thread must read instants on it.
    const clock = anchoredSystemClock();
    const answeredAt: number[] = [];
    const timed = createServer((request, response) => {
      answeredAt.push(clock.nowEpochSeconds());
      response.writeHead(200, { 'content-type': 'text/plain' }).end(`sglang:num_running_reqs ${answeredAt.length}\n`);
    });
    await new Promise<void>((resolve) => timed.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(timed.address() as AddressInfo).port}/metrics`;
      const collection = await collectServerMetrics([url, 'http://127.0.0.1:9/metrics'], clock);
      // Ready means the first scrapes have answered.
      expect(answeredAt.length).toBeGreaterThanOrEqual(1);
      // Until a second answer has come back (the thread polls every 500 ms).
      while (answeredAt.length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
      const t0 = clock.nowEpochSeconds();
      const written = await collection.finish(t0, directory);
      const finishedAt = clock.nowEpochSeconds();
      const samples = parseServerMetrics(await readFile(join(directory, 'server-metrics.jsonl'), 'utf8'));
      expect(written).toBe(samples.length);
      const good = samples.filter((sample) => sample.url === url);
      expect(samples.some((sample) => !sample.ok && sample.url !== url)).toBe(true);
      expect(good.length).toBe(answeredAt.length);
      good.forEach((sample, index) => {
        // Stamped when the answer arrived: after the server sent it and before it answered the next scrape (or, for the
        // last, before the collection finished), on the same clock: an anchor handed over wrongly (seconds for
        // milliseconds, say) puts it outside. By order, not by how long the scrape took.
        expect(sample.time + t0).toBeGreaterThanOrEqual((answeredAt[index] as number) - 0.0005);
        expect(sample.time + t0).toBeLessThan(answeredAt[index + 1] ?? finishedAt);
        expect(sample.metrics[0]?.value).toBe(index + 1);
      });
    } finally {
      await new Promise<void>((resolve) => timed.close(() => resolve()));
    }
  });
});
