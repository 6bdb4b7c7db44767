import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ProcessHealth } from '../types/harness.js';

/**
 * The histogram's timer period. The histogram records the whole interval between two firings of its timer, so the
 * delay is what it records minus this period. 10 ms, not 1: the lateness measured is as fine either way (nanoseconds),
 * a run of seconds still gives hundreds of samples a second for the p99, and the watched process's loop is woken 100
 * times a second instead of 1000 — on a 2-core machine running six processes the watching must not add to the load.
 */
const RESOLUTION_MS = 10;

/** Served by servelab's processes that report on themselves: GET the health since the last reset, DELETE resets it. */
export const HARNESS_PATH = '/_servelab/harness';

const round = (value: number, digits = 3): number => Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * How promptly this process's event loop runs and how much CPU it uses, over a window that `reset` starts. Event-loop
 * delay is the lateness of a periodic timer (perf_hooks.monitorEventLoopDelay): every timestamp a process takes and every
 * byte it relays waits that long when its loop is busy, so it bounds how far the process can have shaped a timing.
 */
export class ProcessHealthMonitor {
  readonly #histogram: IntervalHistogram | null;
  #cpu = process.cpuUsage();
  #startedNs = process.hrtime.bigint();

  /**
   * `eventLoopDelay: false` leaves the histogram off. A simulated server needs that: the histogram's timer wakes its
   * loop between arrivals, which changes which simultaneous arrivals reach the scheduler together (its batching), so
   * it would perturb what it measures; its steps' lateness is measured instead.
   */
  constructor(options: { eventLoopDelay?: boolean } = {}) {
    this.#histogram = options.eventLoopDelay === false ? null : monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    this.#histogram?.enable();
  }

  reset(): void {
    this.#histogram?.reset();
    this.#cpu = process.cpuUsage();
    this.#startedNs = process.hrtime.bigint();
  }

  snapshot(): ProcessHealth {
    const histogram = this.#histogram;
    const delayMs = (nanoseconds: number): number => (Number.isFinite(nanoseconds) && histogram !== null && histogram.count > 0 ? round(Math.max(0, nanoseconds / 1e6 - RESOLUTION_MS)) : 0);
    const cpu = process.cpuUsage(this.#cpu);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    const wallSeconds = Number(process.hrtime.bigint() - this.#startedNs) / 1e9;
    return {
      pid: process.pid,
      event_loop_delay_ms:
        histogram === null ? null : { p50: delayMs(histogram.percentile(50)), p99: delayMs(histogram.percentile(99)), max: delayMs(histogram.max), samples: histogram.count },
      cpu_s: round(cpuSeconds),
      wall_s: round(wallSeconds),
      cpu_share_of_one_core: wallSeconds > 0 ? round(cpuSeconds / wallSeconds) : 0,
    };
  }

  close(): void {
    this.#histogram?.disable();
  }
}

/** Answers a request to HARNESS_PATH: GET the snapshot (with `extra` merged in), DELETE resets (and calls `onReset`). */
export function serveHarness(
  monitor: ProcessHealthMonitor,
  request: IncomingMessage,
  response: ServerResponse,
  hooks: { extra?: () => Record<string, unknown>; onReset?: () => void } = {},
): void {
  if (request.method === 'DELETE') {
    monitor.reset();
    hooks.onReset?.();
    response.writeHead(204).end();
    return;
  }
  if (request.method !== 'GET') {
    response.writeHead(405, { allow: 'GET, DELETE' }).end();
    return;
  }
  const text = JSON.stringify({ ...monitor.snapshot(), ...(hooks.extra?.() ?? {}) });
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

/**
 * `SERVELAB_INJECT_BUSY_LOOP=<role>:<blockMs>/<everyMs>` blocks the event loop of the process with that role (client,
 * router, sim-server) for blockMs every everyMs. It exists to show that the harness check can fail: a run with a
 * deliberately slowed client, router or simulated server must be flagged (test/cli/harness-command.test.ts). Returns a stop function.
 */
export function injectBusyLoopFromEnvironment(role: string): () => void {
  const setting = process.env['SERVELAB_INJECT_BUSY_LOOP'];
  const match = setting === undefined ? null : /^([a-z-]+):(\d+(?:\.\d+)?)\/(\d+(?:\.\d+)?)$/.exec(setting);
  if (match === null || match[1] !== role) return () => undefined;
  const blockMs = Number(match[2]);
  const timer = setInterval(() => {
    const until = performance.now() + blockMs;
    while (performance.now() < until) {
      // Deliberately busy: this is the slowdown being injected.
    }
  }, Number(match[3]));
  timer.unref();
  return () => clearInterval(timer);
}
