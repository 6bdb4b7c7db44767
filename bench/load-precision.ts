/**
 * How precisely the load generator offers a Poisson workload, against a zero-work streaming stub in a child process.
 *
 * For 100, 1,000 and 5,000 req/s it runs the same seeded schedule through servelab's pacer (`runLoad`) and through a
 * naive pacer measured in the same run — sleep for each gap, then send, as SGLang's bench_serving does — and prints,
 * for each, the achieved arrival rate (from the client's `arrivalTime`s), the inter-arrival coefficient of variation
 * and the send lag (`arrivalTime - scheduledTime`) p50/p99/max, beside their targets: rate within 1%, CV
 * 0.97–1.03, lag p99 < 0.5 ms at 1,000 req/s. The schedule's own rate and CV are printed too: a finite Poisson
 * sample strays from the nominal rate by itself, and the pacer can only be asked to follow the schedule it is given.
 * Before each rate, servelab's pacer runs 2 s at that rate unmeasured (a JIT warm-up: see the loop below). A third
 * row, `floor`, runs the schedule through the do-nothing floor pacer (floor-pacer.ts): the machine's own noise, which
 * bounds what any event-loop pacer can reach on it. The whole CLI path (records, files) is measured by
 * node-cli-targets.ts; this one isolates the pacer and client functions `servelab node` runs.
 *
 * Run: npx tsc -p tsconfig.build.json && node dist/bench/load-precision.js   (uses `taskset` when present: client on
 * CPU 0, stub on CPU 1; BENCH_PIN=0 turns that off). BENCH_SCALE=0.2 shortens every run. The figures only mean
 * something on an otherwise idle machine: another busy process on the client's core shows up as send lag.
 */
import { execFileSync } from 'node:child_process';
import { systemClock } from '../src/clock/clock.js';
import { createProtocolClient } from '../src/clients/registry.js';
import { runLoad } from '../src/load/run-load.js';
import type { ProtocolClient } from '../src/types/client.js';
import type { RequestRecord } from '../src/types/record.js';
import type { WorkloadRequest } from '../src/types/workload.js';
import { SeededRandom } from '../src/utils/random.js';
import { createArrivalSchedule } from '../src/workload/arrivals/arrival-registry.js';
import { loadDataset } from '../src/workload/datasets/dataset-registry.js';
import { percentileOfSorted } from '../src/analysis/statistics.js';
import { runFloorPacer } from './floor-pacer.js';
import { canPin } from './stub/pinning.js';
import { startStreamingStub } from './stub/start-streaming-stub.js';

const SCALE = Number(process.env['BENCH_SCALE'] ?? 1);
const RUNS = [
  { rate: 100, count: Math.round(1000 * SCALE) },
  { rate: 1000, count: Math.round(5000 * SCALE) },
  { rate: 5000, count: Math.round(20000 * SCALE) },
];

interface Figures {
  achievedRate: number;
  interArrivalCv: number;
  /** Send lag: arrivalTime - scheduledTime (the pacer's error plus the client's time to write the first byte). */
  lagP50Ms: number;
  lagP99Ms: number;
  lagMaxMs: number;
  /** Dispatch lag: dispatchTime - scheduledTime, the pacer's own error. */
  dispatchLagP99Ms: number;
  failed: number;
}

function coefficientOfVariation(instants: Float64Array): number {
  const gaps = new Float64Array(instants.length - 1);
  for (let index = 1; index < instants.length; index++) gaps[index - 1] = (instants[index] as number) - (instants[index - 1] as number);
  const mean = gaps.reduce((sum, gap) => sum + gap, 0) / gaps.length;
  const variance = gaps.reduce((sum, gap) => sum + (gap - mean) ** 2, 0) / gaps.length;
  return Math.sqrt(variance) / mean;
}

function figuresOf(records: readonly RequestRecord[]): Figures {
  const sent = records.filter((record) => record.arrivalTime !== undefined);
  return figuresFrom(
    Float64Array.from(sent.map((record) => record.arrivalTime as number)),
    Float64Array.from(sent.map((record) => ((record.arrivalTime as number) - record.scheduledTime) * 1000)),
    Float64Array.from(records.map((record) => ((record.dispatchTime ?? Number.NaN) - record.scheduledTime) * 1000)),
    records.filter((record) => !record.success).length,
  );
}

/** The figures from send instants (epoch seconds), send lags and dispatch lags (ms); the arrays are sorted in place. */
function figuresFrom(arrivals: Float64Array, lagsMs: Float64Array, dispatchLagsMs: Float64Array, failed: number): Figures {
  arrivals.sort();
  lagsMs.sort();
  dispatchLagsMs.sort();
  return {
    achievedRate: (arrivals.length - 1) / ((arrivals[arrivals.length - 1] as number) - (arrivals[0] as number)),
    interArrivalCv: coefficientOfVariation(arrivals),
    lagP50Ms: percentileOfSorted(lagsMs, 50),
    lagP99Ms: percentileOfSorted(lagsMs, 99),
    lagMaxMs: lagsMs[lagsMs.length - 1] as number,
    dispatchLagP99Ms: percentileOfSorted(dispatchLagsMs, 99),
    failed,
  };
}

/** The baseline: sleep for each gap, then send without waiting for the answer (bench_serving's way). */
async function runNaivePacer(client: ProtocolClient, requests: WorkloadRequest[], offsetsMs: Float64Array): Promise<RequestRecord[]> {
  const t0Ms = systemClock.nowMs();
  const pending: Promise<RequestRecord>[] = [];
  for (let index = 0; index < requests.length; index++) {
    if (index > 0) {
      const gapMs = (offsetsMs[index] as number) - (offsetsMs[index - 1] as number);
      await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
    const workload = requests[index] as WorkloadRequest;
    const scheduledTime = systemClock.toEpochSeconds(t0Ms + (offsetsMs[index] as number));
    const dispatchTime = systemClock.nowEpochSeconds();
    pending.push(
      client.send({ requestId: `naive-${index}`, workload }).then((outcome) => ({
        ...outcome,
        requestId: `naive-${index}`,
        datasetIndex: index,
        warmup: false,
        inputLength: workload.inputLength,
        expectedOutputLength: workload.outputLength,
        scheduledTime,
        dispatchTime,
      })),
    );
  }
  return Promise.all(pending);
}

/** Starts measuring this process's CPU time; the returned function gives CPU per request and the share of one core. */
function startUsage(): (count: number) => { microsecondsPerRequest: number; share: number } {
  const cpuBefore = process.cpuUsage();
  const wallBeforeMs = systemClock.nowMs();
  return (count) => {
    const cpu = process.cpuUsage(cpuBefore);
    const cpuMicroseconds = cpu.user + cpu.system;
    return { microsecondsPerRequest: cpuMicroseconds / count, share: cpuMicroseconds / 1000 / (systemClock.nowMs() - wallBeforeMs) };
  };
}

function fmt(value: number, digits: number): string {
  return value.toFixed(digits).padStart(9);
}

async function main(): Promise<void> {
  const pinned = canPin();
  if (pinned) execFileSync('taskset', ['-a', '-cp', '0', String(process.pid)], { stdio: 'ignore' });
  const { child, baseUrl } = await startStreamingStub(pinned);
  console.log(pinned ? 'client pinned to CPU 0, stub to CPU 1' : 'client and stub are not pinned (no taskset, or BENCH_PIN=0)');
  const loadAverage = (await import('node:os')).loadavg()[0] as number;
  console.log(`load average before the run: ${loadAverage.toFixed(2)}${loadAverage > 0.5 ? ' (a busy machine: the figures below include other processes\' interference)' : ''}`);
  const client = createProtocolClient('sglang', {
    baseUrl,
    stream: true,
    sampling: { temperature: 0, ignoreEos: true },
    clock: systemClock,
  });
  try {
    const maxCount = Math.max(...RUNS.map((run) => run.count));
    const requests = await loadDataset(
      { datasetName: 'random', numPrompts: maxCount, randomInputLen: 32, randomOutputLen: 16, randomRangeRatio: 1 },
      new SeededRandom(1),
    );
    // Warm up connections and JIT before anything is measured.
    await runLoad({
      requests: requests.slice(0, 2000),
      warmupRequests: [],
      arrivalOffsetsMs: createArrivalSchedule({ process: 'poisson', requestRate: 2000 }, 2000, new SeededRandom(99)),
      client,
      clock: systemClock,
    });
    console.log('');
    console.log(
      'rate (req/s)  pacer       achieved  schedule  ach/sched     CV  sched CV  lag p50 ms  lag p99 ms  lag max ms  dispatch p99 ms  failed',
    );
    for (const { rate, count } of RUNS) {
      const offsetsMs = createArrivalSchedule({ process: 'poisson', requestRate: rate }, count, new SeededRandom(rate));
      const scheduleInstants = Float64Array.from(offsetsMs, (offset) => offset / 1000);
      const scheduleRate = (count - 1) / ((scheduleInstants[count - 1] as number) - (scheduleInstants[0] as number));
      const scheduleCv = coefficientOfVariation(scheduleInstants);
      const slice = requests.slice(0, count);
      // Warm-up at this rate (another seed, 2 s): each rate takes paths the others did not, and V8 compiles them again
      // on its background threads, which share the client's one core; measured cold, a run's first seconds show that.
      const warmupCount = Math.min(count, Math.round(rate * 2 * Math.max(SCALE, 0.1)));
      await runLoad({
        requests: requests.slice(0, warmupCount),
        warmupRequests: [],
        arrivalOffsetsMs: createArrivalSchedule({ process: 'poisson', requestRate: rate }, warmupCount, new SeededRandom(rate + 1)),
        client,
        clock: systemClock,
      });
      const servelabUsage = startUsage();
      const servelab = figuresOf((await runLoad({ requests: slice, warmupRequests: [], arrivalOffsetsMs: offsetsMs, client, clock: systemClock })).records);
      const servelabCpu = servelabUsage(count);
      const naiveUsage = startUsage();
      const naive = figuresOf(await runNaivePacer(client, slice, offsetsMs));
      const naiveCpu = naiveUsage(count);
      const floorFigures = await runFloorPacer(offsetsMs);
      const floor: Figures = { achievedRate: floorFigures.rate, interArrivalCv: floorFigures.cv, lagP50Ms: floorFigures.lagP50Ms, lagP99Ms: floorFigures.lagP99Ms, lagMaxMs: floorFigures.lagMaxMs, dispatchLagP99Ms: floorFigures.lagP99Ms, failed: 0 };
      for (const [name, figures] of [
        ['servelab', servelab],
        ['naive', naive],
        ['floor', floor],
      ] as const) {
        console.log(
          `${String(rate).padStart(12)}  ${name.padEnd(9)}${fmt(figures.achievedRate, 1)}${fmt(scheduleRate, 1)}${fmt(figures.achievedRate / scheduleRate, 4)}` +
            `${fmt(figures.interArrivalCv, 3)}${fmt(scheduleCv, 3)}${fmt(figures.lagP50Ms, 3).padStart(12)}${fmt(figures.lagP99Ms, 3).padStart(12)}` +
            `${fmt(figures.lagMaxMs, 3).padStart(12)}${fmt(figures.dispatchLagP99Ms, 3).padStart(17)}${String(figures.failed).padStart(8)}`,
        );
      }
      console.log(
        `${''.padStart(12)}  client process CPU: servelab ${servelabCpu.microsecondsPerRequest.toFixed(0)} µs/request, ` +
          `${(servelabCpu.share * 100).toFixed(0)}% of one core over the run; naive ${naiveCpu.microsecondsPerRequest.toFixed(0)} µs/request, ` +
          `${(naiveCpu.share * 100).toFixed(0)}% (a share well under 100% while lagging means the process was kept off the CPU)`,
      );
      const rateOk = Math.abs(servelab.achievedRate / scheduleRate - 1) < 0.01;
      const cvOk = servelab.interArrivalCv >= 0.97 && servelab.interArrivalCv <= 1.03;
      const floorCvOk = floor.interArrivalCv >= 0.97 && floor.interArrivalCv <= 1.03;
      console.log(
        `${''.padStart(12)}  targets: rate within 1% of the schedule ${rateOk ? 'met' : 'MISSED'}; CV 0.97–1.03 ${cvOk ? 'met' : 'MISSED'}` +
          (cvOk || floorCvOk ? '' : ' (out of reach on this machine: the do-nothing floor pacer misses it too)') +
          (rate === 1000 ? `; lag p99 < 0.5 ms ${servelab.lagP99Ms < 0.5 ? 'met' : 'MISSED'}` : '') +
          (naive.lagP99Ms > 0
            ? `; naive/servelab lag p99 ratio ${(naive.lagP99Ms / Math.max(servelab.lagP99Ms, 1e-6)).toFixed(1)}×`
            : '; the naive pacer runs early (its timers round gaps down), so a lag ratio means nothing here'),
      );
    }
  } finally {
    await client.close();
    child.stdin?.end();
    child.kill();
  }
}

await main();
