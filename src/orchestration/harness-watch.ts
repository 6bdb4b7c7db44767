import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { request } from 'undici';
import { HARNESS_THRESHOLDS } from '../analysis/harness.js';
import type { HarnessMeasurements, HarnessProcess, HarnessRole, HostCpu, ProcessHealth } from '../types/harness.js';
import { controlTokenHeaders } from '../routing/router/control-auth.js';
import { HARNESS_PATH, injectBusyLoopFromEnvironment, ProcessHealthMonitor } from '../utils/process-health.js';

/** A servelab process of the run that serves HARNESS_PATH (today: launched simulated servers). */
export interface WatchedProcess {
  name: string;
  role: HarnessRole;
  /** Its base URL (HARNESS_PATH is asked there). */
  url: string;
  /** Simulated servers: the host URL their records carry. */
  node?: string;
}

/** A process that does not answer within this is reported missing rather than holding up the run's end. */
const ASK_TIMEOUT_MS = 5_000;

async function ask(url: string, method: 'GET' | 'DELETE'): Promise<ProcessHealth | undefined> {
  // The endpoint needs the run's control token, which the processes servelab launched inherited from it.
  const answer = await request(`${url}${HARNESS_PATH}`, { method, headers: controlTokenHeaders(), headersTimeout: ASK_TIMEOUT_MS, bodyTimeout: ASK_TIMEOUT_MS });
  if (answer.statusCode < 200 || answer.statusCode > 299) {
    await answer.body.dump();
    throw new Error(`HTTP ${answer.statusCode}`);
  }
  if (method === 'DELETE') {
    await answer.body.dump();
    return undefined;
  }
  return (await answer.body.json()) as ProcessHealth;
}

/** How often the host's CPU is sampled. */
const HOST_SAMPLE_INTERVAL_MS = 250;

interface CpuTimes {
  busy: number;
  total: number;
}

/** Busy and total jiffies of all cores, from the first line of /proc/stat; null where it cannot be read. */
function readCpuTimes(): CpuTimes | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    const fields = line.trim().split(/\s+/).slice(1).map(Number);
    if (fields.length < 5 || fields.some((value) => !Number.isFinite(value))) return null;
    // user nice system idle iowait irq softirq steal (guest time is already inside user): idle + iowait is idle.
    const total = fields.slice(0, 8).reduce((sum, value) => sum + value, 0);
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}

const round = (value: number): number => Math.round(value * 1000) / 1000;

/** Samples the host's CPU busy share until stopped. */
class HostCpuSampler {
  readonly #timer: NodeJS.Timeout | undefined;
  readonly #first: CpuTimes | null;
  #previous: CpuTimes | null;
  readonly #shares: number[] = [];

  constructor() {
    this.#first = readCpuTimes();
    this.#previous = this.#first;
    if (this.#first === null) return;
    this.#timer = setInterval(() => this.#sample(), HOST_SAMPLE_INTERVAL_MS);
    this.#timer.unref();
  }

  #sample(): void {
    const now = readCpuTimes();
    if (now === null || this.#previous === null) return;
    const total = now.total - this.#previous.total;
    if (total > 0) this.#shares.push((now.busy - this.#previous.busy) / total);
    this.#previous = now;
  }

  stop(): HostCpu | null {
    clearInterval(this.#timer);
    this.#sample();
    const last = readCpuTimes();
    if (this.#first === null || last === null || last.total <= this.#first.total) return null;
    return {
      cores: availableParallelism(),
      samples: this.#shares.length,
      interval_ms: HOST_SAMPLE_INTERVAL_MS,
      busy_share_mean: round((last.busy - this.#first.busy) / (last.total - this.#first.total)),
      busy_share_max: round(Math.max(0, ...this.#shares)),
      share_of_samples_over_threshold:
        this.#shares.length === 0 ? 0 : round(this.#shares.filter((share) => share > HARNESS_THRESHOLDS.host_cpu_busy_share).length / this.#shares.length),
    };
  }
}

/**
 * Watches the harness over the measured window: this process (the client: its event-loop delay and CPU), the
 * servelab processes that report on themselves (asked over HTTP: launched simulated servers), and the host's CPU.
 * `start` when the measured schedule starts (t0), `finish` when the load is done. servelab's processes that do not
 * report on themselves yet (its builtin router, its taps) are named by the caller as `unwatched`, so the report says
 * what was not checked rather than calling it clean.
 */
export class HarnessWatch {
  readonly #self = new ProcessHealthMonitor();
  #host: HostCpuSampler | undefined;
  #stopInjected: () => void = () => undefined;
  #watched: readonly WatchedProcess[] = [];
  readonly #missing = new Map<string, string>();

  /** Starts the window everywhere; the others' resets are not awaited: they must not hold up the schedule. */
  start(watched: readonly WatchedProcess[] = []): void {
    this.#self.reset();
    this.#host?.stop();
    this.#host = new HostCpuSampler();
    this.#stopInjected = injectBusyLoopFromEnvironment('client');
    this.#watched = watched;
    for (const process of watched) {
      ask(process.url, 'DELETE').catch((error: unknown) =>
        this.#missing.set(process.name, `${process.name}: could not start its window (${(error as Error).message})`),
      );
    }
  }

  async finish(unwatched: readonly string[]): Promise<HarnessMeasurements> {
    const client = this.#self.snapshot();
    const host = this.#host?.stop() ?? null;
    this.#host = undefined;
    this.close();
    const processes: HarnessProcess[] = [{ name: 'client', role: 'client', ...client }];
    const answers = await Promise.all(
      this.#watched.map(async (process) => {
        try {
          return { process, health: await ask(process.url, 'GET') };
        } catch (error) {
          this.#missing.set(process.name, `${process.name}: no harness report (${(error as Error).message})`);
          return { process, health: undefined };
        }
      }),
    );
    for (const { process, health } of answers) {
      if (health === undefined || this.#missing.has(process.name)) continue;
      processes.push({ name: process.name, role: process.role, ...(process.node === undefined ? {} : { node: process.node }), ...health });
    }
    return {
      processes,
      host_cpu: host,
      missing: [...this.#missing.values(), ...unwatched.map((name) => `${name}: does not report on itself yet (not checked)`)],
    };
  }

  /** Stops every timer (idempotent): `finish` calls it, and a run that failed before finishing must too. */
  close(): void {
    this.#stopInjected();
    this.#stopInjected = () => undefined;
    this.#self.close();
    this.#host?.stop();
    this.#host = undefined;
  }
}
