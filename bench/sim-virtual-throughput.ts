/**
 * Virtual-time simulation throughput against its target: at least 1,000,000 simulated requests a minute,
 * here over 64 simulated engines (Llama-3-8B on H100 profile, radix cache on) behind round-robin routing.
 * Run: npm run build && node dist/bench/sim-virtual-throughput.js [requests]
 * Baseline in the same run: generating the same workload and walking its arrivals without any engine, the floor
 * under any simulation of it.
 */
import { VirtualTimeSimulator } from '../src/engine/virtual/virtual-time-simulator.js';
import { SeededRandom } from '../src/utils/random.js';

const TARGET_REQUESTS_PER_MINUTE = 1_000_000;
const ENGINES = 64;
const REQUESTS = Number(process.argv[2] ?? 200_000);
/** Per-engine arrival rate: busy engines (tens of running requests each), not an idle cluster. */
const RATE_PER_ENGINE_PER_SECOND = 8;

interface Workload {
  arrivalsMs: Float64Array;
  promptOffsets: Int32Array;
  promptLengths: Int32Array;
  outputLengths: Int32Array;
  corpus: Int32Array;
}

function makeWorkload(count: number): Workload {
  const random = new SeededRandom(42);
  const corpus = new Int32Array(1 << 20);
  for (let index = 0; index < corpus.length; index++) corpus[index] = random.integer(0, 127_999);
  const arrivalsMs = new Float64Array(count);
  const promptOffsets = new Int32Array(count);
  const promptLengths = new Int32Array(count);
  const outputLengths = new Int32Array(count);
  const rateMs = (RATE_PER_ENGINE_PER_SECOND * ENGINES) / 1000;
  let atMs = 0;
  for (let index = 0; index < count; index++) {
    atMs += random.exponential(rateMs);
    arrivalsMs[index] = atMs;
    promptLengths[index] = random.integer(64, 1024);
    promptOffsets[index] = random.integer(0, corpus.length - 1025);
    outputLengths[index] = random.integer(16, 256);
  }
  return { arrivalsMs, promptOffsets, promptLengths, outputLengths, corpus };
}

function baseline(workload: Workload): number {
  const started = performance.now();
  let checksum = 0;
  for (let index = 0; index < workload.arrivalsMs.length; index++) {
    const prompt = workload.corpus.subarray(workload.promptOffsets[index], (workload.promptOffsets[index] as number) + (workload.promptLengths[index] as number));
    checksum += prompt.length + (workload.outputLengths[index] as number) + (workload.arrivalsMs[index] as number);
  }
  if (checksum < 0) console.log(checksum);
  return performance.now() - started;
}

async function simulate(workload: Workload): Promise<{ wallMs: number; virtualMs: number; finished: number; tokens: number }> {
  let finished = 0;
  let tokens = 0;
  const sim = await VirtualTimeSimulator.create({
    engines: ENGINES,
    settings: { profile: 'llama-3-8b-h100', maxRunningRequests: 256 },
    events: {
      onFinish: (_engine, view) => {
        finished++;
        tokens += view.outputTokens;
      },
    },
  });
  const started = performance.now();
  for (let index = 0; index < workload.arrivalsMs.length; index++) {
    const offset = workload.promptOffsets[index] as number;
    sim.submit(
      index % ENGINES,
      {
        id: `r${index}`,
        promptTokenIds: workload.corpus.subarray(offset, offset + (workload.promptLengths[index] as number)),
        maxNewTokens: workload.outputLengths[index] as number,
      },
      workload.arrivalsMs[index] as number,
    );
  }
  const virtualMs = sim.runUntilIdle();
  return { wallMs: performance.now() - started, virtualMs, finished, tokens };
}

const workload = makeWorkload(REQUESTS);
const baselineMs = baseline(workload);
const result = await simulate(workload);
const perMinute = (result.finished / result.wallMs) * 60_000;
console.log(`sim-virtual-throughput: ${REQUESTS} requests over ${ENGINES} engines (llama-3-8b-h100, radix cache on)`);
console.log(`  simulated ${(result.virtualMs / 1000).toFixed(1)} s of serving (${result.tokens} tokens) in ${(result.wallMs / 1000).toFixed(2)} s of wall time`);
console.log(`  ${Math.round(perMinute).toLocaleString('en-US')} simulated requests/minute (target >= ${TARGET_REQUESTS_PER_MINUTE.toLocaleString('en-US')}): ${perMinute >= TARGET_REQUESTS_PER_MINUTE ? 'meets' : 'MISSES'} the target`);
console.log(`  baseline (workload walk without engines): ${baselineMs.toFixed(1)} ms; simulation / baseline = ${(result.wallMs / baselineMs).toFixed(1)}x`);
if (result.finished !== REQUESTS) {
  console.error(`  only ${result.finished} of ${REQUESTS} requests finished`);
  process.exitCode = 1;
}
