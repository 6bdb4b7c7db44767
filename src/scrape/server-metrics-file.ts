import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { MetricSample } from './prometheus-text.js';

export const SERVER_METRICS_JSONL = 'server-metrics.jsonl';

/** A sample as read back from server-metrics.jsonl: `time` in seconds after t0. */
export interface StoredSample {
  time: number;
  url: string;
  ok: boolean;
  error?: string;
  metrics: MetricSample[];
}

/** One line of server-metrics.jsonl as a sample, or undefined when it is not a JSON object (a torn tail of a killed run). */
function parseSampleLine(line: string): StoredSample | undefined {
  if (line.trim() === '') return undefined;
  try {
    const object = JSON.parse(line) as StoredSample & { metrics: { name: string; labels: Record<string, string>; value: number | string }[] };
    return {
      ...object,
      metrics: object.metrics.map((metric) => ({ ...metric, value: typeof metric.value === 'string' ? Number(metric.value) : metric.value })),
    };
  } catch {
    return undefined;
  }
}

/** Parses server-metrics.jsonl text; lines that are not JSON objects are skipped (a torn tail of a killed run). */
export function parseServerMetrics(text: string): StoredSample[] {
  const samples: StoredSample[] = [];
  for (const line of text.split('\n')) {
    const sample = parseSampleLine(line);
    if (sample !== undefined) samples.push(sample);
  }
  return samples;
}

/** Reads server-metrics.jsonl a line at a time: a long run's file never becomes one string. */
export async function readServerMetrics(path: string): Promise<StoredSample[]> {
  const samples: StoredSample[] = [];
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 }), crlfDelay: Infinity });
  for await (const line of lines) {
    const sample = parseSampleLine(line);
    if (sample !== undefined) samples.push(sample);
  }
  return samples;
}

/** The time series of one metric per URL, summed over label sets (e.g. tp ranks): [time, value] pairs. */
export function seriesOf(samples: readonly StoredSample[], name: string): Map<string, [number, number][]> {
  const series = new Map<string, [number, number][]>();
  for (const sample of samples) {
    if (!sample.ok) continue;
    let total: number | undefined;
    for (const metric of sample.metrics) if (metric.name === name) total = (total ?? 0) + metric.value;
    if (total === undefined) continue;
    let points = series.get(sample.url);
    if (!points) series.set(sample.url, (points = []));
    points.push([sample.time, total]);
  }
  return series;
}
