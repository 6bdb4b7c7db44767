import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, anchoredSystemClock, systemClock } from '../../src/clock/clock.js';
import type { RunNotice } from '../../src/types/run.js';
import { collectServerMetrics } from '../../src/orchestration/server-metrics.js';
import { existsSync } from 'node:fs';
import { parseCsv } from '../../src/report/csv/csv-format.js';
import { startScraper, type Sample } from '../../src/scrape/scraper.js';
import { finishServerMetricsTable, readServerMetrics, seriesOf } from '../../src/scrape/server-metrics-file.js';
import { SERVER_METRICS_PARTIAL } from '../../src/scrape/server-metrics-rows.js';
import { ServerMetricsSpool } from '../../src/scrape/server-metrics-spool.js';

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

  it('polls at the interval, stamps samples on the run clock, and writes server-metrics.csv one row per series', async () => {
    const runDirectory = await mkdtemp(join(directory, 'run-'));
    const t0 = systemClock.nowEpochSeconds();
    const spool = new ServerMetricsSpool(join(runDirectory, SERVER_METRICS_PARTIAL));
    const samples: Sample[] = [];
    // A generous timeout: this test is about polling and stamping, and the default (100 ms here) can pass on a machine
    // busy with other test files, which turns a sample into a timeout.
    const scraper = startScraper({
      urls: [`${baseUrl}/metrics`],
      intervalMs: 25,
      timeoutMs: 10_000,
      clock: systemClock,
      keepMetric: (name) => name.startsWith('sglang:'),
      onSample: (sample) => {
        samples.push(sample);
        spool.append(sample);
      },
    });
    // Stopped after its third scrape, however loaded the machine (no wall-clock window to miss).
    for (let waited = 0; scrapes < 3 && waited < 10_000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await scraper.stop()).toBe(samples.length);
    spool.close();
    expect(samples.length).toBeGreaterThanOrEqual(3);
    for (let index = 1; index < samples.length; index++) expect(samples[index]?.time).toBeGreaterThan(samples[index - 1]?.time as number);
    expect(samples.every((sample) => sample.ok && sample.metrics.every((metric) => metric.name === 'sglang:num_running_reqs'))).toBe(true);

    // Per scrape, its scrape row, then both tp ranks' rows: rank 0 moves every scrape, and a name that moved is written
    // whole (rank 1, always 1, with it).
    expect(await finishServerMetricsTable(runDirectory, t0)).toBe(3 * samples.length);
    const rows = parseCsv(await readFile(join(runDirectory, 'server-metrics.csv'), 'utf8'));
    expect(rows[0]).toEqual(['time_s', 'timestamp', 'node', 'metric', 'labels', 'value', 'scrape_ms', 'error']);
    expect(rows[1]?.slice(2)).toEqual([baseUrl, '', '', '', rows[1]?.[6], '']);
    expect(rows.slice(2, 4).map((row) => [row[2], row[3], JSON.parse(row[4] as string)])).toEqual([
      [baseUrl, 'sglang:num_running_reqs', { tp_rank: '0' }],
      [baseUrl, 'sglang:num_running_reqs', { tp_rank: '1' }],
    ]);
    expect(Number(rows[2]?.[0])).toBeCloseTo((samples[0]?.time as number) - t0, 5);
    expect(existsSync(join(runDirectory, SERVER_METRICS_PARTIAL))).toBe(false);
    // Summed over tp ranks: the first scrape of this test saw running = n + 1 for its scrape count n.
    const stored = await readServerMetrics(runDirectory, t0, () => true);
    const points = seriesOf(stored, 'sglang:num_running_reqs').get(baseUrl) ?? [];
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
    const samples: Sample[] = [];
    const scraper = startScraper({ urls: [`${baseUrl}/nope`, closedUrl], intervalMs: 1000, clock, onSample: (sample) => samples.push(sample) });
    await scraper.stop();
    expect(samples).toHaveLength(2);
    const byUrl = Object.fromEntries(samples.map((sample) => [sample.url, sample]));
    expect(byUrl[`${baseUrl}/nope`]).toMatchObject({ ok: false, error: 'HTTP 404', time: 1_700_000_000 });
    expect(byUrl[closedUrl]).toMatchObject({ ok: false, error: 'ECONNREFUSED', metrics: [] });
  });

  it('names a scrape that outlived its deadline a timeout', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const samples: Sample[] = [];
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/metrics`;
      const scraper = startScraper({ urls: [url], intervalMs: 1000, timeoutMs: 50, clock: systemClock, onSample: (sample) => samples.push(sample) });
      await scraper.firstRound;
      await scraper.stop();
      expect(samples[0]).toMatchObject({ ok: false, error: 'timeout after 50 ms', metrics: [] });
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
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
      const runDirectory = await mkdtemp(join(directory, 'run-'));
      const collection = await collectServerMetrics([url, 'http://127.0.0.1:9/metrics'], clock, { directory: runDirectory });
      // Ready means the first scrapes have answered.
      expect(answeredAt.length).toBeGreaterThanOrEqual(1);
      // Until a second answer has come back (the thread polls every 500 ms).
      while (answeredAt.length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
      const t0 = clock.nowEpochSeconds();
      const written = await collection.finish(t0);
      const finishedAt = clock.nowEpochSeconds();
      const samples = await readServerMetrics(runDirectory, t0, () => true);
      const good = samples.filter((sample) => sample.url === url.replace(/\/metrics$/, ''));
      // Each answer is its scrape row and the one series (its value moved every time); a failure is its scrape row.
      expect(written).toBe(samples.length + good.length);
      expect(samples.filter((sample) => !sample.ok && sample.error !== undefined).length).toBeGreaterThan(0);
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

  it('puts each scrape on disk as it comes, before the run ends (memory does not hold them)', async () => {
    const clock = anchoredSystemClock();
    let answers = 0;
    const endpoint = createServer((request, response) => {
      answers++;
      response.writeHead(200, { 'content-type': 'text/plain' }).end(`sglang:token_usage{model_name="a \\"b\\", c"} +Inf\nsglang:num_queue_reqs ${answers}\n`);
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/metrics`;
      const runDirectory = await mkdtemp(join(directory, 'run-'));
      const collection = await collectServerMetrics([url], clock, { directory: runDirectory });
      while (answers < 3) await new Promise((resolve) => setTimeout(resolve, 20));
      // Wait for the third scrape's rows (the thread appends right after the answer arrives).
      const partialPath = join(runDirectory, SERVER_METRICS_PARTIAL);
      const rowsOnDisk = async (): Promise<number> => (existsSync(partialPath) ? (await readFile(partialPath, 'utf8')).split('\n').length - 1 : 0);
      for (let waited = 0; (await rowsOnDisk()) < 6 && waited < 10_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await rowsOnDisk()).toBeGreaterThanOrEqual(6);
      const t0 = clock.nowEpochSeconds();
      const rowCount = await collection.finish(t0);
      const rows = parseCsv(await readFile(join(runDirectory, 'server-metrics.csv'), 'utf8')).slice(1);
      expect(rows).toHaveLength(rowCount);
      const usage = rows.find((row) => row[3] === 'sglang:token_usage');
      // Labels with quotes and commas survive as one JSON field; +Inf is written as pandas reads it.
      expect(JSON.parse(usage?.[4] as string)).toEqual({ model_name: 'a "b", c' });
      expect(usage?.[5]).toBe('inf');
      expect(Number(usage?.[0])).toBeLessThan(0);
    } finally {
      await new Promise<void>((resolve) => endpoint.close(() => resolve()));
    }
  });

  it('keeps what was scraped when the scraper thread dies, and says so in a notice', async () => {
    const clock = anchoredSystemClock();
    let answers = 0;
    // After two small answers, one far too large for the thread's heap: the thread runs out of memory.
    const huge = Array.from({ length: 400_000 }, (_, index) => `sglang:x{tp_rank="0",i="${index}"} ${index}\n`).join('');
    const endpoint = createServer((request, response) => {
      answers++;
      response.writeHead(200, { 'content-type': 'text/plain' }).end(answers <= 2 ? `sglang:num_running_reqs ${answers}\n` : huge);
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/metrics`;
      const runDirectory = await mkdtemp(join(directory, 'run-'));
      const notices: RunNotice[] = [];
      const collection = await collectServerMetrics([url], clock, { directory: runDirectory, maxOldGenerationSizeMb: 24, onNotice: (notice) => notices.push(notice) });
      for (let waited = 0; notices.length === 0 && waited < 20_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(notices[0]?.source).toBe('scraper');
      expect(notices[0]?.message).toMatch(/scraper thread stopped .*holds what it scraped until then/);
      const t0 = clock.nowEpochSeconds();
      const rows = await collection.finish(t0);
      const samples = await readServerMetrics(runDirectory, t0, () => true);
      // A machine busy with other tests may turn a scrape into a timeout (an error row): the answers are what count.
      // Each answer is its scrape row and its series; a timeout, its scrape row.
      expect(rows).toBe(samples.length + samples.filter((sample) => sample.ok).length);
      expect(samples.filter((sample) => sample.ok).map((sample) => sample.metrics[0]?.value)).toEqual([1, 2]);
    } finally {
      await new Promise<void>((resolve) => endpoint.close(() => resolve()));
    }
  }, 30_000);

  it('reads a killed run\'s partial file back for its charts, times after t0, a torn last row dropped, only the series asked for', async () => {
    const runDirectory = await mkdtemp(join(directory, 'run-'));
    const t0 = 1_700_000_000;
    const spool = new ServerMetricsSpool(join(runDirectory, SERVER_METRICS_PARTIAL));
    for (const [time, running] of [[t0 + 1, 3], [t0 + 1.5, 4]] as const) {
      spool.append({
        time, url: 'http://127.0.0.1:30001/metrics', ok: true, durationMs: 2,
        metrics: [
          { name: 'sglang:num_running_reqs', labels: { tp_rank: '0' }, value: running },
          { name: 'sglang:num_running_reqs', labels: { tp_rank: '1' }, value: 1 },
          { name: 'sglang:other', labels: {}, value: 9 },
        ],
      });
    }
    spool.close();
    // A kill mid-append leaves half a row.
    await appendFile(join(runDirectory, SERVER_METRICS_PARTIAL), `${t0 + 2},http://127.0.0.1:30001,sglang:num_running_reqs,"{""tp`);
    const samples = await readServerMetrics(runDirectory, t0, (name) => name === 'sglang:num_running_reqs');
    expect(samples.map((sample) => [sample.time, sample.url, sample.metrics.map((metric) => [metric.name, metric.value])])).toEqual([
      [1, 'http://127.0.0.1:30001', [['sglang:num_running_reqs', 4]]],
      [1.5, 'http://127.0.0.1:30001', [['sglang:num_running_reqs', 5]]],
    ]);
  });
});
