/**
 * Load generators as separate processes (`--client-nodes`, src/load/generator-process/): one generator process at a
 * rate R against two at 2R, each run offering one seeded Poisson schedule to a simulated SGLang server in its own
 * process (`servelab sim-server`, a fast profile with room for every request).
 *
 * A third row, first, is the in-process path at R (this process sends), for what a generator process of its own costs.
 *
 * Printed for each: the rate the server received (from its own receive stamps, `server_created_time`), the
 * inter-arrival coefficient of variation at the server beside the schedule's own, send lag (`arrival_time −
 * scheduled_time`, the generators' instants moved onto this process's clock) p50/p99, failures, and each generator's
 * measured clock offset and its uncertainty. The target (issue 24): two generators hold twice the rate at the same
 * send-lag p99 and inter-arrival CV as one.
 *
 * On a 2-core machine this cannot show scaling: the coordinator, the server and the generators share two cores, so a
 * second generator process adds contention instead of a core of its own. The figures are printed as they are; the
 * comparison that means something needs each generator on its own host (or at least its own cores).
 *
 * Run: npm run build && node dist/bench/load-generators.js   (BENCH_RATE=R sets the one-generator rate, default 200;
 * BENCH_SCALE=0.5 halves the schedule's length, default 5 s).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { percentileOfSorted } from '../src/analysis/statistics.js';
import { systemClock } from '../src/clock/clock.js';
import { launchSimServer } from '../src/cluster/launchers/sim/launch-sim-server.js';
import { localPlacement } from '../src/cluster/placement/local/local-placement.js';
import { runLoadAcrossGenerators } from '../src/load/generator-process/run-load-across-generators.js';
import { runLoadAcrossWorkers } from '../src/load/multi-worker/run-load-across-workers.js';
import type { LoadResult, ProtocolClientSpec } from '../src/types/load.js';
import { SeededRandom } from '../src/utils/random.js';
import { createArrivalSchedule } from '../src/workload/arrivals/arrival-registry.js';
import { loadDataset } from '../src/workload/datasets/dataset-registry.js';
import { rateAndCv } from './arrival-figures.js';

const RATE = Number(process.env['BENCH_RATE'] ?? 200);
const SCALE = Number(process.env['BENCH_SCALE'] ?? 1);
const DURATION_S = 5 * SCALE;

interface Figures {
  serverRate: number;
  serverCv: number;
  scheduleCv: number;
  lagP50Ms: number;
  lagP99Ms: number;
  failed: number;
  clocks: string;
}

function figuresOf(result: LoadResult, offsetsMs: Float64Array): Figures {
  const received = Float64Array.from(
    result.records.filter((record) => record.serverCreatedTime !== undefined),
    (record) => record.serverCreatedTime as number,
  ).sort();
  const lagsMs = Float64Array.from(
    result.records.filter((record) => record.arrivalTime !== undefined),
    (record) => ((record.arrivalTime as number) - record.scheduledTime) * 1000,
  ).sort();
  const atServer = rateAndCv(received);
  return {
    serverRate: atServer.rate,
    serverCv: atServer.cv,
    scheduleCv: rateAndCv(Float64Array.from(offsetsMs, (offsetMs) => offsetMs / 1000)).cv,
    lagP50Ms: percentileOfSorted(lagsMs, 50),
    lagP99Ms: percentileOfSorted(lagsMs, 99),
    failed: result.records.filter((record) => !record.success).length,
    clocks: (result.loadGenerators ?? []).map((generator) => `${generator.clock.offsetMs?.toFixed(3)} ± ${generator.clock.uncertaintyMs?.toFixed(3)} ms`).join(', '),
  };
}

function fmt(value: number, digits: number, width = 10): string {
  return value.toFixed(digits).padStart(width);
}

async function main(): Promise<void> {
  const loadAverage = loadavg()[0] as number;
  console.log(
    `${availableParallelism()} cores, load average ${loadAverage.toFixed(2)} before the run. Coordinator, sim-server and generators share them: ` +
      'with fewer cores than processes a second generator cannot add capacity, only contention.',
  );
  // A 1 ms step and enough running slots that the server never queues: the arrivals it stamps are the generators'.
  const directory = await mkdtemp(join(tmpdir(), 'servelab-bench-generators-'));
  const profile = join(directory, 'profile.json');
  await writeFile(profile, JSON.stringify({ kind: 'simple', stepMs: 1 }));
  const server = await launchSimServer({ name: 'sim-server', profile, maxRunningRequests: 4096, placement: localPlacement });
  const clientSpec: ProtocolClientSpec = { protocol: 'sglang', options: { baseUrl: server.url, stream: true, sampling: { temperature: 0, ignoreEos: true } } };
  try {
    const rows: { generators: number; rate: number; figures: Figures }[] = [];
    // 0: the in-process path (this process sends, `--client-nodes 1`) at R, for what a process of its own costs.
    for (const generators of [0, 1, 2]) {
      const rate = RATE * Math.max(generators, 1);
      const count = Math.round(rate * DURATION_S);
      const requests = await loadDataset({ datasetName: 'random', numPrompts: count, randomInputLen: 32, randomOutputLen: 8, randomRangeRatio: 1 }, new SeededRandom(rate));
      const offsetsMs = createArrivalSchedule({ process: 'poisson', requestRate: rate }, count, new SeededRandom(rate));
      const shared = { clientSpec, requests, warmupRequests: requests.slice(0, 8), arrivalOffsetsMs: offsetsMs, clock: systemClock };
      // A run with one generator process goes through the same path as two: the process, its clock, its stream.
      const result = generators === 0 ? await runLoadAcrossWorkers({ ...shared, workers: 1 }) : await runLoadAcrossGenerators({ ...shared, generators, placement: localPlacement });
      rows.push({ generators, rate, figures: figuresOf(result, offsetsMs) });
    }
    console.log('');
    console.log('generators (0: in-process)');
    console.log('generators  rate (req/s)  at server  CV server  CV sched  lag p50 ms  lag p99 ms  failed  clock offsets (generator − coordinator)');
    for (const { generators, rate, figures } of rows) {
      console.log(
        `${String(generators).padStart(10)}${String(rate).padStart(14)}${fmt(figures.serverRate, 1, 11)}${fmt(figures.serverCv, 3, 11)}${fmt(figures.scheduleCv, 3)}` +
          `${fmt(figures.lagP50Ms, 3, 12)}${fmt(figures.lagP99Ms, 3, 12)}${String(figures.failed).padStart(8)}  ${figures.clocks}`,
      );
    }
    const [, one, two] = rows.map((row) => row.figures) as [Figures, Figures, Figures];
    const lagRatio = two.lagP99Ms / Math.max(one.lagP99Ms, 1e-6);
    const cvGapOne = Math.abs(one.serverCv - one.scheduleCv);
    const cvGapTwo = Math.abs(two.serverCv - two.scheduleCv);
    console.log('');
    console.log(
      `target: two generators at ${2 * RATE} req/s with the send-lag p99 and CV one has at ${RATE} req/s. ` +
        `Measured: lag p99 ${fmt(two.lagP99Ms, 3, 0)} against ${fmt(one.lagP99Ms, 3, 0)} ms (${fmt(lagRatio, 2, 0)}×), ` +
        `CV off the schedule's by ${fmt(cvGapTwo, 3, 0)} against ${fmt(cvGapOne, 3, 0)}: ${lagRatio <= 1.2 && cvGapTwo <= cvGapOne + 0.03 ? 'met' : 'MISSED'}` +
        `${availableParallelism() < 4 ? ` (on ${availableParallelism()} shared cores this says little about scaling: see the header)` : ''}`,
    );
  } finally {
    await server.stop();
    await rm(directory, { recursive: true, force: true });
  }
}

await main();
