import { request } from 'undici';
import type { Clock } from '../clock/clock.js';
import type { EpochSeconds, Milliseconds } from '../types/time.js';
import { parsePrometheusText, type MetricSample } from './prometheus-text.js';

/** One scrape of one `/metrics` endpoint. */
export interface Sample {
  /** When the answer arrived, on the run's clock (epoch seconds). */
  time: EpochSeconds;
  url: string;
  ok: boolean;
  /** Why the scrape failed (unreachable, HTTP status, timeout). */
  error?: string;
  /** How long the scrape took (ms), for judging how stale `time` is. */
  durationMs: Milliseconds;
  metrics: MetricSample[];
}

export interface ScraperOptions {
  /** Full URLs of the `/metrics` endpoints (each server, and the router's Prometheus port). */
  urls: readonly string[];
  intervalMs?: Milliseconds;
  /**
   * The wait before the next round, asked as each round starts (default: `intervalMs` every time); a round that
   * comes due while a URL's previous scrape is in flight still skips that URL. servelab's runs pace it by what the
   * rows weigh on disk (ScrapeBudget).
   */
  nextIntervalMs?: () => Milliseconds;
  /** The run's clock: sample times are its readings, so they line up with the records. */
  clock: Clock;
  /** Per-scrape deadline; default: the interval (a slow endpoint skips ticks rather than piling up requests). */
  timeoutMs?: Milliseconds;
  /** Keep only the series for which this returns true (default: all). */
  keepMetric?: (name: string) => boolean;
  /**
   * Takes each sample as it is scraped; the scraper keeps none, so its memory does not grow with the run's length.
   * (servelab's runs append them to disk: ServerMetricsSpool.)
   */
  onSample: (sample: Sample) => void;
}

export interface Scraper {
  /** Settles once every URL's first scrape has answered, failed or timed out. */
  readonly firstRound: Promise<void>;
  /** Settles once the scrapes in flight now have answered (or failed) and been handed to `onSample`. */
  settled(): Promise<void>;
  /** Stops polling and waits for the scrapes in flight (each handed to `onSample`); returns how many samples there were. */
  stop(): Promise<number>;
}

async function scrapeOnce(url: string, clock: Clock, timeoutMs: Milliseconds, keepMetric?: (name: string) => boolean): Promise<Sample> {
  const startedMs = clock.nowMs();
  const finish = (ok: boolean, metrics: MetricSample[], error?: string): Sample => {
    const sample: Sample = { time: clock.nowEpochSeconds(), url, ok, durationMs: clock.nowMs() - startedMs, metrics };
    if (error !== undefined) sample.error = error;
    return sample;
  };
  try {
    // undici's request, the project's standard HTTP API outside the measured path (fetch wraps the same client in more
    // layers and hides the socket error's code under `cause`).
    const response = await request(url, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await response.body.text();
    if (response.statusCode < 200 || response.statusCode >= 300) return finish(false, [], `HTTP ${response.statusCode}`);
    const parsed = parsePrometheusText(text);
    return finish(true, keepMetric ? parsed.samples.filter((sample) => keepMetric(sample.name)) : parsed.samples);
  } catch (error) {
    const reason = (error as { code?: string }).code;
    const name = (error as Error).name;
    return finish(false, [], name === 'TimeoutError' ? `timeout after ${timeoutMs} ms` : (reason ?? (error as Error).message));
  }
}

/**
 * Polls every URL every `intervalMs` (default 500), or at the pace `nextIntervalMs` sets, until stopped. Ticks follow
 * an absolute schedule on the clock; a tick that comes due while the previous scrape of a URL is still in flight is
 * skipped for that URL, and missed ticks are not replayed in a burst. A failing endpoint yields samples with `ok: false`, never an exception.
 */
export function startScraper(options: ScraperOptions): Scraper {
  const intervalMs = options.intervalMs ?? 500;
  const timeoutMs = options.timeoutMs ?? Math.max(intervalMs, 100);
  const { clock } = options;
  let sampleCount = 0;
  const inFlight = new Map<string, Promise<void>>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let nextDueMs = clock.nowMs();

  const tick = (): void => {
    if (stopped) return;
    for (const url of options.urls) {
      if (inFlight.has(url)) continue;
      const scrape = scrapeOnce(url, clock, timeoutMs, options.keepMetric).then((sample) => {
        inFlight.delete(url);
        sampleCount++;
        options.onSample(sample);
      });
      inFlight.set(url, scrape);
    }
    nextDueMs = Math.max(nextDueMs + (options.nextIntervalMs?.() ?? intervalMs), clock.nowMs());
    timer = setTimeout(tick, Math.max(0, nextDueMs - clock.nowMs()));
    // Scraping must never keep a finished process alive.
    timer.unref();
  };
  tick();
  const firstRound = Promise.all(inFlight.values()).then(() => undefined);

  return {
    firstRound,
    async settled(): Promise<void> {
      await Promise.all(inFlight.values());
    },
    async stop(): Promise<number> {
      stopped = true;
      if (timer) clearTimeout(timer);
      await Promise.all(inFlight.values());
      return sampleCount;
    },
  };
}
