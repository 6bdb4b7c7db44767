/**
 * Offering a Poisson schedule faster than one core can: the load generator on 1 worker (the calling thread) against
 * 2 worker threads (`runLoadAcrossWorkers`), at 5,000 and 10,000 req/s, against the zero-work streaming stub in a child
 * process (`bench/stub/streaming-stub.ts`: 16 streamed tokens per request).
 *
 * For each it prints the achieved arrival rate against the schedule's own (from the client's `arrivalTime`s), the
 * inter-arrival coefficient of variation against the schedule's, send lag (`arrivalTime - scheduledTime`) p50/p99,
 * failures, and the client process's CPU per request and share of the machine (all its threads), beside the
 * targets: rate within 1% and CV 0.97–1.03 up to 5,000 req/s, under 80 µs of client CPU per streamed request.
 *
 * The machine this was written for has 2 cores, and the stub needs one of them: with 2 client workers, the client's
 * threads and the stub share 2 cores, so the 2-worker figures show what a second thread buys on a machine that is
 * already full, not what 2 free cores would give. The stub is pinned to CPU 1 when `taskset` exists (BENCH_PIN=0 turns
 * that off); the client process is left unpinned so its workers can use both cores.
 *
 * Run: npx tsc -p tsconfig.build.json && node dist/bench/load-multi-worker.js   (BENCH_SCALE=0.3 shortens every run).
 */
import { availableParallelism, loadavg } from 'node:os';
import { systemClock } from '../src/clock/clock.js';
import { runLoadAcrossWorkers } from '../src/load/multi-worker/run-load-across-workers.js';
import type { LoadResult, ProtocolClientSpec } from '../src/types/load.js';
import type { WorkloadRequest } from '../src/types/workload.js';
import { SeededRandom } from '../src/utils/random.js';
import { createArrivalSchedule } from '../src/workload/arrivals/arrival-registry.js';
import { loadDataset } from '../src/workload/datasets/dataset-registry.js';
import { percentileOfSorted } from '../src/analysis/statistics.js';
import { canPin } from './stub/pinning.js';
import { startStreamingStub } from './stub/start-streaming-stub.js';
import { rateAndCv } from './arrival-figures.js';

const SCALE = Number(process.env['BENCH_SCALE'] ?? 1);
const DURATION_S = 3;
const RATES = [5000, 10000];
const WORKER_COUNTS = [1, 2];
/**
 * Connections the client may open, split over the workers. Every run builds fresh clients (a worker thread's client
 * lives as long as its run), and an unbounded cold client at thousands of requests a second opens connections faster
 * than the stub accepts them: its listen queue (Node's default backlog, 511) overflows and the dropped connects are
 * retried by the kernel a second or more later, which would show as seconds of send lag that are not the pacer's.
 */
const MAX_CONNECTIONS = Number(process.env['BENCH_MAX_CONNECTIONS'] ?? 128);

interface Figures {
  achievedRate: number;
  cv: number;
  lagP50Ms: number;
  lagP99Ms: number;
  failed: number;
  cpuMicrosecondsPerRequest: number;
  /** CPU over wall time: 1.0 is one core busy throughout. */
  coresBusy: number;
  /** From the call to the schedule origin t0: starting the workers and the start lead (300 ms). */
  startupMs: number;
}

async function measure(
  workers: number,
  clientSpec: ProtocolClientSpec,
  requests: WorkloadRequest[],
  offsetsMs: Float64Array,
): Promise<Figures> {
  const cpuBefore = process.cpuUsage();
  const wallBeforeMs = systemClock.nowMs();
  const calledAtEpochS = systemClock.nowEpochSeconds();
  const result: LoadResult = await runLoadAcrossWorkers({ workers, clientSpec, requests, warmupRequests: [], arrivalOffsetsMs: offsetsMs, clock: systemClock });
  const cpu = process.cpuUsage(cpuBefore);
  const wallMs = systemClock.nowMs() - wallBeforeMs;
  const sent = result.records.filter((record) => record.arrivalTime !== undefined);
  const arrivals = Float64Array.from(sent, (record) => record.arrivalTime as number).sort();
  const lagsMs = Float64Array.from(sent, (record) => ((record.arrivalTime as number) - record.scheduledTime) * 1000).sort();
  const { rate, cv } = rateAndCv(arrivals);
  return {
    achievedRate: rate,
    cv,
    lagP50Ms: percentileOfSorted(lagsMs, 50),
    lagP99Ms: percentileOfSorted(lagsMs, 99),
    failed: result.records.filter((record) => !record.success).length,
    cpuMicrosecondsPerRequest: (cpu.user + cpu.system) / requests.length,
    coresBusy: (cpu.user + cpu.system) / 1000 / wallMs,
    startupMs: (result.startTime - calledAtEpochS) * 1000,
  };
}

function fmt(value: number, digits: number, width = 10): string {
  return value.toFixed(digits).padStart(width);
}

async function main(): Promise<void> {
  const pinned = canPin();
  const { child, baseUrl } = await startStreamingStub(pinned);
  console.log(
    `${availableParallelism()} cores; stub ${pinned ? 'pinned to CPU 1' : 'not pinned'}, client process unpinned. ` +
      'The stub needs a core of its own: with 2 client workers on a 2-core machine the client threads and the stub share both cores.',
  );
  const loadAverage = loadavg()[0] as number;
  console.log(`load average before the run: ${loadAverage.toFixed(2)}${loadAverage > 0.5 ? ' (a busy machine: the figures include other processes\' interference)' : ''}`);
  console.log(`client connections capped at ${MAX_CONNECTIONS} in all (BENCH_MAX_CONNECTIONS), split over the workers; ${DURATION_S * SCALE} s of schedule per run`);
  const clientSpec: ProtocolClientSpec = {
    protocol: 'sglang',
    options: { baseUrl, stream: true, sampling: { temperature: 0, ignoreEos: true }, maxConnections: MAX_CONNECTIONS },
  };
  try {
    const maxCount = Math.round(Math.max(...RATES) * DURATION_S * SCALE);
    const requests = await loadDataset(
      { datasetName: 'random', numPrompts: maxCount, randomInputLen: 32, randomOutputLen: 16, randomRangeRatio: 1 },
      new SeededRandom(1),
    );
    // Warm this thread's JIT, the stub and its connections before anything is measured (worker threads start cold on
    // every run: that is part of what a multi-worker run costs, and it is in the figures).
    const warmupCount = Math.round(3000 * SCALE);
    await measure(1, clientSpec, requests.slice(0, warmupCount), createArrivalSchedule({ process: 'poisson', requestRate: 3000 }, warmupCount, new SeededRandom(99)));
    console.log('');
    console.log('rate (req/s)  workers   achieved  schedule  ach/sched        CV  sched CV  lag p50 ms  lag p99 ms  failed  CPU µs/req  cores busy  startup ms');
    const rows: { rate: number; workers: number; figures: Figures; scheduleRate: number }[] = [];
    for (const rate of RATES) {
      const count = Math.round(rate * DURATION_S * SCALE);
      const offsetsMs = createArrivalSchedule({ process: 'poisson', requestRate: rate }, count, new SeededRandom(rate));
      const schedule = rateAndCv(Float64Array.from(offsetsMs, (offsetMs) => offsetMs / 1000));
      for (const workers of WORKER_COUNTS) {
        const figures = await measure(workers, clientSpec, requests.slice(0, count), offsetsMs);
        rows.push({ rate, workers, figures, scheduleRate: schedule.rate });
        console.log(
          `${String(rate).padStart(12)}  ${String(workers).padStart(7)}${fmt(figures.achievedRate, 1, 11)}${fmt(schedule.rate, 1)}${fmt(figures.achievedRate / schedule.rate, 4, 11)}` +
            `${fmt(figures.cv, 3)}${fmt(schedule.cv, 3)}${fmt(figures.lagP50Ms, 3, 12)}${fmt(figures.lagP99Ms, 3, 12)}${String(figures.failed).padStart(8)}` +
            `${fmt(figures.cpuMicrosecondsPerRequest, 1, 12)}${fmt(figures.coresBusy, 2, 12)}${fmt(figures.startupMs, 0, 12)}`,
        );
      }
    }
    console.log('');
    for (const { rate, workers, figures, scheduleRate } of rows) {
      const rateOk = Math.abs(figures.achievedRate / scheduleRate - 1) < 0.01;
      const cvOk = figures.cv >= 0.97 && figures.cv <= 1.03;
      const cpuOk = figures.cpuMicrosecondsPerRequest < 80;
      console.log(
        `${String(rate).padStart(6)} req/s, ${workers} worker${workers === 1 ? ' ' : 's'}: rate within 1% ${rateOk ? 'met' : 'MISSED'}; ` +
          `CV 0.97–1.03 ${cvOk ? 'met' : 'MISSED'}${rate > 5000 ? ' (the target holds up to 5,000 req/s only)' : ''}; ` +
          `client CPU < 80 µs/request ${cpuOk ? 'met' : 'MISSED'}`,
      );
    }
    for (const rate of RATES) {
      const one = rows.find((row) => row.rate === rate && row.workers === 1)?.figures;
      const two = rows.find((row) => row.rate === rate && row.workers === 2)?.figures;
      if (one === undefined || two === undefined) continue;
      console.log(
        `${String(rate).padStart(6)} req/s: 2 workers / 1 worker — lag p99 ${fmt(two.lagP99Ms / Math.max(one.lagP99Ms, 1e-6), 2, 0)}×, ` +
          `|CV − 1| ${fmt(Math.abs(two.cv - 1) / Math.max(Math.abs(one.cv - 1), 1e-6), 2, 0)}×, CPU per request ${fmt(two.cpuMicrosecondsPerRequest / one.cpuMicrosecondsPerRequest, 2, 0)}×`,
      );
    }
  } finally {
    child.stdin?.end();
    child.kill();
  }
}

await main();
