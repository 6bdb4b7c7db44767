import { createReadStream, existsSync } from 'node:fs';
import { open, rename, rm, stat } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { writeFailure } from '../utils/write-failure.js';
import type { MetricSample } from './prometheus-text.js';
import { SERVER_METRICS_COLUMNS, SERVER_METRICS_CSV, SERVER_METRICS_PARTIAL, secondsText } from './server-metrics-rows.js';

/** The nested file of runs before server-metrics.csv; still read, so that `servelab report` redraws their charts. */
export const SERVER_METRICS_JSONL = 'server-metrics.jsonl';

/** A scrape as read back: `time` in seconds after t0, `url` the node (server base URL, or `/metrics` URL in old runs). */
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

/** Parses server-metrics.jsonl text (old runs); lines that are not JSON objects are skipped (a torn tail of a killed run). */
export function parseServerMetrics(text: string): StoredSample[] {
  const samples: StoredSample[] = [];
  for (const line of text.split('\n')) {
    const sample = parseSampleLine(line);
    if (sample !== undefined) samples.push(sample);
  }
  return samples;
}

/** Lines of a file, read a megabyte at a time; a last line without its line break (a torn write) is left out. */
async function* completeLines(path: string): AsyncGenerator<string> {
  const size = (await stat(path)).size;
  if (size === 0) return;
  const handle = await open(path, 'r');
  const last = Buffer.alloc(1);
  await handle.read(last, 0, 1, size - 1);
  await handle.close();
  const torn = last[0] !== 0x0a;
  let pending: string | undefined;
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 }), crlfDelay: Infinity });
  for await (const line of lines) {
    if (pending !== undefined) yield pending;
    pending = line;
  }
  if (pending !== undefined && !torn) yield pending;
}

/** Splits one of our CSV rows (quoted fields hold no line breaks: labels are JSON, errors one line). */
export function splitCsvRow(line: string): string[] {
  const fields: string[] = [];
  let index = 0;
  for (;;) {
    if (line[index] === '"') {
      let value = '';
      index++;
      for (;;) {
        const quote = line.indexOf('"', index);
        if (quote < 0) return fields.concat(value + line.slice(index));
        value += line.slice(index, quote);
        if (line[quote + 1] === '"') {
          value += '"';
          index = quote + 2;
          continue;
        }
        index = quote + 1;
        break;
      }
      fields.push(value);
    } else {
      const comma = line.indexOf(',', index);
      fields.push(line.slice(index, comma < 0 ? line.length : comma));
      index = comma < 0 ? line.length : comma;
    }
    if (line[index] !== ',') return fields;
    index++;
  }
}

/**
 * Turns the partial file the scraper appended to during the run into server-metrics.csv: each row gains `time_s`
 * (seconds after t0) in front. Streamed, a megabyte at a time, into a temporary sibling renamed into place, so a
 * multi-hour run's table never sits in memory and a reader never sees half a file. Returns the rows written.
 */
export async function finishServerMetricsTable(directory: string, t0: number): Promise<number> {
  const partialPath = join(directory, SERVER_METRICS_PARTIAL);
  const path = join(directory, SERVER_METRICS_CSV);
  const temporaryPath = join(directory, `.${SERVER_METRICS_CSV}.${randomBytes(6).toString('hex')}.tmp`);
  let rows = 0;
  try {
    const handle = await open(temporaryPath, 'w');
    try {
      let buffered = `${SERVER_METRICS_COLUMNS.join(',')}\n`;
      if (existsSync(partialPath)) {
        for await (const line of completeLines(partialPath)) {
          const comma = line.indexOf(',');
          const timestamp = Number(line.slice(0, comma));
          if (comma < 0 || !Number.isFinite(timestamp)) continue;
          buffered += `${secondsText(timestamp - t0)},${line}\n`;
          rows++;
          if (buffered.length > 1 << 20) {
            await handle.write(buffered);
            buffered = '';
          }
        }
      }
      await handle.write(buffered);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporaryPath, path);
  } catch (error) {
    await rm(temporaryPath, { force: true });
    throw writeFailure(path, error);
  }
  await rm(partialPath, { force: true });
  return rows;
}

/**
 * Rebuilds every scrape's values, row by row, for the metrics `keep` accepts (summed over their label sets). A scrape
 * of today's table opens with its scrape row (no metric) and lists only the names whose series moved (ChangedRows):
 * a name's rows in a scrape replace what it had, a row with neither labels nor value ends it, and the rest hold from
 * the node's scrapes before. A scrape of an older table lists every series and opens with its first: nothing carries
 * over into it. A failed scrape carries nothing over either (its node's next answer is written whole).
 */
class ScrapeRebuilder {
  readonly samples: StoredSample[] = [];
  readonly #keep: (name: string) => boolean;
  /** Per node, per kept metric name, per label set (as written): the value it holds. */
  readonly #held = new Map<string, Map<string, Map<string, number>>>();
  #scrape: { node: string; time: number; error: string; names: Set<string> } | undefined;

  constructor(keep: (name: string) => boolean) {
    this.#keep = keep;
  }

  /** Adds one row (every column, `time_s` first, as numbers: `time` seconds after t0). */
  add(fields: readonly string[], time: number): void {
    const [, , node = '', metric = '', labels = '', valueField = '', , error = ''] = fields;
    if (this.#scrape === undefined || this.#scrape.node !== node || this.#scrape.time !== time) {
      this.finish();
      if (metric !== '' || error !== '') this.#held.delete(node);
      this.#scrape = { node, time, error, names: new Set() };
    }
    if (metric === '' || !this.#keep(metric)) return;
    let held = this.#held.get(node);
    if (held === undefined) this.#held.set(node, (held = new Map()));
    if (!this.#scrape.names.has(metric)) {
      this.#scrape.names.add(metric);
      held.set(metric, new Map());
    }
    if (labels === '' && valueField === '') {
      held.delete(metric);
      return;
    }
    const value = valueField === 'inf' ? Infinity : valueField === '-inf' ? -Infinity : Number(valueField);
    held.get(metric)?.set(labels, value);
  }

  /** Closes the scrape being read: a failed one is a sample with its error; an answer, one if it holds a kept metric. */
  finish(): void {
    const scrape = this.#scrape;
    this.#scrape = undefined;
    if (scrape === undefined) return;
    if (scrape.error !== '') {
      this.samples.push({ time: scrape.time, url: scrape.node, ok: false, error: scrape.error, metrics: [] });
      return;
    }
    const metrics: MetricSample[] = [];
    for (const [name, series] of this.#held.get(scrape.node) ?? []) {
      let value = 0;
      for (const seriesValue of series.values()) value += seriesValue;
      if (series.size > 0) metrics.push({ name, labels: {}, value });
    }
    if (metrics.length > 0) this.samples.push({ time: scrape.time, url: scrape.node, ok: true, metrics });
  }
}

/**
 * Reads a run's scraped metrics back for its charts, one sample per scrape, keeping only the metrics `keep` accepts
 * (summed over label sets, e.g. tp ranks), each scrape with the values it saw, written then or held from before
 * (ScrapeRebuilder): memory grows with the charted points, not with everything scraped. From server-metrics.csv; else
 * from the partial file a killed run left (times made relative to `t0`); else from an old run's server-metrics.jsonl.
 */
export async function readServerMetrics(directory: string, t0: number, keep: (name: string) => boolean): Promise<StoredSample[]> {
  const csvPath = join(directory, SERVER_METRICS_CSV);
  const partialPath = join(directory, SERVER_METRICS_PARTIAL);
  if (existsSync(csvPath) || existsSync(partialPath)) {
    const partial = !existsSync(csvPath);
    const rebuilder = new ScrapeRebuilder(keep);
    let header = !partial;
    for await (const line of completeLines(partial ? partialPath : csvPath)) {
      if (header) {
        header = false;
        continue;
      }
      // The partial file's rows lack time_s: put the column back from the timestamp.
      const fields = partial ? ['', ...splitCsvRow(line)] : splitCsvRow(line);
      const time = partial ? Number(fields[1]) - t0 : Number(fields[0]);
      if (!Number.isFinite(time)) continue;
      rebuilder.add(fields, time);
    }
    rebuilder.finish();
    return rebuilder.samples;
  }
  const samples: StoredSample[] = [];
  const jsonlPath = join(directory, SERVER_METRICS_JSONL);
  if (!existsSync(jsonlPath)) return samples;
  for await (const line of completeLines(jsonlPath)) {
    const sample = parseSampleLine(line);
    if (sample === undefined) continue;
    sample.metrics = sample.metrics.filter((metric) => keep(metric.name));
    samples.push(sample);
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
