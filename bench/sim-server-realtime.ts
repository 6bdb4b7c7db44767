/**
 * The request rate one real-time sim-server process sustains while keeping its step timing within 1 ms of the cost
 * model (docs/simulated-engine.md). A fresh `servelab sim-server` child (Llama-3-8B on H100 profile) per
 * rate, driven by a node test with 512-token prompts and 128-token outputs; after each run the server's own
 * `/server_info` says how late its steps completed against the model timeline. Baseline: the lowest rate, where the
 * process is nearly idle.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchSimServer } from '../src/cluster/launchers/sim/launch-sim-server.js';
import { NodeTest } from '../src/index.js';

interface Lateness {
  steps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  reanchors: number;
}

const rates = process.argv.slice(2).map(Number).filter((rate) => rate > 0);
const directory = await mkdtemp(join(tmpdir(), 'servelab-bench-simrt-'));
let highestWithinTarget = 0;
let baselineP99 = Number.NaN;
try {
  for (const rate of rates.length > 0 ? rates : [5, 20, 40, 80, 120]) {
    const server = await launchSimServer({ name: 'sim-server', profile: 'llama-3-8b-h100', logPath: join(directory, `sim-${rate}.log`) });
    try {
      const result = await new NodeTest({
        target: 'attach', url: server.url, requestRate: rate, numPrompts: Math.max(100, rate * 8), randomInputLen: 512, randomOutputLen: 128,
        randomRangeRatio: 1, warmupRequests: 0, outputDir: join(directory, `rate-${rate}`), progress: 'off',
      }).run();
      const info = (await (await fetch(`${server.url}/server_info`)).json()) as { servelab_step_lateness_ms: Lateness; internal_states: unknown };
      const lateness = info.servelab_step_lateness_ms;
      if (Number.isNaN(baselineP99)) baselineP99 = lateness.p99Ms;
      const ok = lateness.p99Ms <= 1 && lateness.reanchors === 0;
      if (ok) highestWithinTarget = rate;
      process.stdout.write(
        `rate ${String(rate).padStart(4)} req/s: ${lateness.steps} steps, step lateness p50 ${lateness.p50Ms.toFixed(2)} ms, p99 ${lateness.p99Ms.toFixed(2)} ms ` +
          `(${(lateness.p99Ms / Math.max(baselineP99, 0.05)).toFixed(1)}x the ${rates[0] ?? 5} req/s baseline), max ${lateness.maxMs.toFixed(2)} ms, re-anchors ${lateness.reanchors}, ` +
          `achieved ${result.metrics.throughput.requestsPerSecond.toFixed(1)} req/s, concurrency ${result.metrics.concurrency.benchServing.toFixed(1)}: ${ok ? 'within 1 ms' : 'NOT within 1 ms'}\n`,
      );
    } finally {
      await server.stop();
    }
  }
  process.stdout.write(`highest rate tried with step timing p99 within 1 ms of the model: ${highestWithinTarget} req/s\n`);
} finally {
  await rm(directory, { recursive: true, force: true });
}
