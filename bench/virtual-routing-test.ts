/**
 * A whole virtual-time routing test as a user runs it (target: at least a million simulated requests a minute):
 * the workload drawn from its seed, arrivals, a routing policy choosing among 64 simulated engines, and every record
 * built. Files are not written (their cost is the analysis benchmark's). Baseline: the same run with 8 requests, to
 * separate fixed start-up cost from per-request cost.
 */
import { systemClock } from '../src/clock/clock.js';
import { resolveRoutingTestConfig } from '../src/config/routing-test-config.js';
import { buildWorkload } from '../src/orchestration/build-workload.js';
import { runVirtualTime } from '../src/orchestration/virtual-time/virtual-time-run.js';

const requests = Number(process.argv[2] ?? 1_000_000);
const policy = process.argv[3] ?? 'round_robin';

async function timeRun(numPrompts: number): Promise<{ workloadMs: number; simulationMs: number; succeeded: number }> {
  const config = resolveRoutingTestConfig({
    virtualTime: true, numGpus: 64, routingPolicy: policy, numPrompts, warmupRequests: 0, requestRate: 64 * 20,
    datasetName: 'random-ids', randomInputLen: 256, randomOutputLen: 64, randomRangeRatio: 0.5, profile: 'llama-3-8b-h100', seed: 1,
  });
  let started = performance.now();
  const workload = await buildWorkload(config);
  const workloadMs = performance.now() - started;
  started = performance.now();
  const load = await runVirtualTime({ config, workload, routed: true, clock: systemClock, runId: 'bench' });
  const simulationMs = performance.now() - started;
  return { workloadMs, simulationMs, succeeded: load.records.filter((record) => record.success).length };
}

const baseline = await timeRun(8);
const measured = await timeRun(requests);
const totalMs = measured.workloadMs + measured.simulationMs;
const perMinute = (requests / totalMs) * 60_000;
process.stdout.write(
  `${requests} requests, 64 engines, ${policy}: workload ${(measured.workloadMs / 1000).toFixed(1)} s + simulation ${(measured.simulationMs / 1000).toFixed(1)} s ` +
    `= ${perMinute.toFixed(0)} simulated requests/minute (target >= 1,000,000; ${measured.succeeded} succeeded); ` +
    `fixed cost (8-request run) ${(baseline.workloadMs + baseline.simulationMs).toFixed(0)} ms\n`,
);
