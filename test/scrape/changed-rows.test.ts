import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCsv } from '../../src/report/csv/csv-format.js';
import type { MetricSample } from '../../src/scrape/prometheus-text.js';
import type { Sample } from '../../src/scrape/scraper.js';
import { finishServerMetricsTable, readServerMetrics, seriesOf } from '../../src/scrape/server-metrics-file.js';
import { SERVER_METRICS_PARTIAL } from '../../src/scrape/server-metrics-rows.js';
import { ServerMetricsSpool } from '../../src/scrape/server-metrics-spool.js';

const T0 = 1_700_000_000;
const URL = 'http://127.0.0.1:30001/metrics';
const NODE = 'http://127.0.0.1:30001';

function answer(time: number, running0: number, queue: number | undefined): Sample {
  const metrics: MetricSample[] = [
    { name: 'sglang:num_running_reqs', labels: { tp_rank: '0' }, value: running0 },
    { name: 'sglang:num_running_reqs', labels: { tp_rank: '1' }, value: 1 },
    { name: 'sglang:other', labels: {}, value: 9 },
  ];
  if (queue !== undefined) metrics.push({ name: 'sglang:num_queue_reqs', labels: { tp_rank: '0' }, value: queue });
  return { time: T0 + time, url: URL, ok: true, durationMs: 2, metrics };
}

describe('server-metrics.csv written as changes', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'servelab-changed-rows-'));
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('writes a scrape row and the names that moved, and reads back every scrape\'s values for the charts', async () => {
    const runDirectory = await mkdtemp(join(directory, 'run-'));
    const spool = new ServerMetricsSpool(join(runDirectory, SERVER_METRICS_PARTIAL));
    spool.append(answer(1, 3, 0));
    // Only the queue moved.
    spool.append(answer(1.5, 3, 2));
    // Rank 0 moved (both ranks written), the queue gauge is no longer served.
    spool.append(answer(2, 4, undefined));
    spool.append({ time: T0 + 2.5, url: URL, ok: false, error: 'ECONNREFUSED', durationMs: 1, metrics: [] });
    // After a failure the answer is written whole, though nothing moved but the queue's return.
    spool.append(answer(3, 4, 5));
    spool.close();
    await finishServerMetricsTable(runDirectory, T0);
    const rows = parseCsv(await readFile(join(runDirectory, 'server-metrics.csv'), 'utf8')).slice(1);
    const byTime = (time: string) => rows.filter((row) => row[0] === time).map((row) => [row[3], row[4], row[5], row[7]]);
    expect(byTime('1')).toEqual([
      ['', '', '', ''],
      ['sglang:num_running_reqs', '{"tp_rank":"0"}', '3', ''],
      ['sglang:num_running_reqs', '{"tp_rank":"1"}', '1', ''],
      ['sglang:other', '{}', '9', ''],
      ['sglang:num_queue_reqs', '{"tp_rank":"0"}', '0', ''],
    ]);
    expect(byTime('1.5')).toEqual([['', '', '', ''], ['sglang:num_queue_reqs', '{"tp_rank":"0"}', '2', '']]);
    expect(byTime('2')).toEqual([
      ['', '', '', ''],
      ['sglang:num_running_reqs', '{"tp_rank":"0"}', '4', ''],
      ['sglang:num_running_reqs', '{"tp_rank":"1"}', '1', ''],
      ['sglang:num_queue_reqs', '', '', ''],
    ]);
    expect(byTime('2.5')).toEqual([['', '', '', 'ECONNREFUSED']]);
    expect(byTime('3')).toHaveLength(5);

    // The charts see each scrape as it was: values held from before, summed over ranks, the vanished gauge gone.
    const samples = await readServerMetrics(runDirectory, T0, (name) => name !== 'sglang:other');
    expect(samples.map((sample) => [sample.time, sample.ok, Object.fromEntries(sample.metrics.map((metric) => [metric.name, metric.value]))])).toEqual([
      [1, true, { 'sglang:num_running_reqs': 4, 'sglang:num_queue_reqs': 0 }],
      [1.5, true, { 'sglang:num_running_reqs': 4, 'sglang:num_queue_reqs': 2 }],
      [2, true, { 'sglang:num_running_reqs': 5 }],
      [2.5, false, {}],
      [3, true, { 'sglang:num_running_reqs': 5, 'sglang:num_queue_reqs': 5 }],
    ]);
    expect(seriesOf(samples, 'sglang:num_queue_reqs').get(NODE)).toEqual([[1, 0], [1.5, 2], [3, 5]]);
  });

  it('still reads a table of whole scrapes (runs before), carrying nothing from one scrape to the next', async () => {
    const runDirectory = await mkdtemp(join(directory, 'run-'));
    const header = 'time_s,timestamp,node,metric,labels,value,scrape_ms,error\n';
    const row = (time: number, metric: string, value: number) => `${time},${T0 + time},${NODE},${metric},"{}",${value},2,\n`;
    await writeFile(
      join(runDirectory, 'server-metrics.csv'),
      header + row(1, 'sglang:num_running_reqs', 3) + row(1, 'sglang:num_queue_reqs', 7) + row(1.5, 'sglang:num_running_reqs', 4),
    );
    const samples = await readServerMetrics(runDirectory, T0, () => true);
    expect(samples.map((sample) => sample.metrics.map((metric) => [metric.name, metric.value]))).toEqual([
      [['sglang:num_running_reqs', 3], ['sglang:num_queue_reqs', 7]],
      [['sglang:num_running_reqs', 4]],
    ]);
  });

  it('counts an empty page as a failed scrape, as before, and writes the next answer whole', async () => {
    const runDirectory = await mkdtemp(join(directory, 'run-'));
    const spool = new ServerMetricsSpool(join(runDirectory, SERVER_METRICS_PARTIAL));
    spool.append(answer(1, 3, 0));
    spool.append({ time: T0 + 1.5, url: URL, ok: true, durationMs: 1, metrics: [] });
    spool.append(answer(2, 3, 0));
    spool.close();
    await finishServerMetricsTable(runDirectory, T0);
    const rows = parseCsv(await readFile(join(runDirectory, 'server-metrics.csv'), 'utf8')).slice(1);
    expect(rows.filter((row) => row[0] === '1.5').map((row) => [row[3], row[7]])).toEqual([['', 'no samples']]);
    expect(rows.filter((row) => row[0] === '2')).toHaveLength(5);
  });
});
