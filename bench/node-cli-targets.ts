/**
 * Issue 10's targets on the path users run: the built CLI, `servelab node --target attach`, against the zero-work
 * streaming stub (bench/stub/streaming-stub.ts: 16 streamed tokens per request), the CLI pinned to CPU 0 and the stub
 * to CPU 1 (with `taskset`; BENCH_PIN=0 turns that off). Nothing here calls servelab's functions: the CLI process is
 * the thing measured, from outside.
 *
 * - CPU: `utime + stime` of the CLI process (all its threads), read from /proc/<pid>/stat every 5 ms; the CPU "while
 *   arrivals run" is the difference between the readings at the stub's first and last measured arrival (interpolated),
 *   over the requests that arrived in between. Writing the outputs: the CLI's CPU from the moment the stub finished its
 *   last answer to the process's exit (analysis, every file, exit), the exit figure from the shell's `times`.
 * - Arrivals as the server sees them: the stub notes when each measured request's last byte came; the achieved rate
 *   and the inter-arrival CV come from those instants, and are printed beside the schedule's own (from the run's
 *   requests.jsonl, `scheduled_time`): a finite Poisson sample strays from its nominal rate and CV by itself.
 * - Send lag: `arrival_time - scheduled_time` from the run's requests.jsonl, as the product records it.
 * - Memory: VmRSS of the CLI process at the first measured arrival and when the stub finished its last answer, over
 *   the requests of the run; the per-token gaps (15 per request here, 8 bytes each) are counted apart.
 *
 * Baselines measured in the same run, on the same core, following the same schedule:
 * - the do-nothing floor pacer (`runFloorPacer`): it reads the clock on every turn of its event loop and "sends" by
 *   noting the instant, so the CV and lag it shows are the machine's own noise, the best any event-loop pacer can do
 *   here;
 * - the bare Node client (floor-client.ts), against a fresh stub: sockets, timers and a pre-built request, nothing
 *   parsed or kept, so its CPU per request is what the runtime itself costs on this machine for this traffic, the
 *   floor under any Node client's figure.
 * SGLang's own client (`python -m sglang.bench_serving`) would be the natural CPU baseline; it cannot be installed here
 * (no PyPI).
 *
 * Run: npm run bench -- node-cli-targets   (BENCH_SCALE=0.2 shortens every run; BENCH_PHASES=cpu,rate,memory,transport picks;
 * transport runs the socket pool against undici, see transportPhase;
 * BENCH_KEEP=1 keeps the run directories).
 */
import { execFileSync, spawn } from 'node:child_process';
import { createReadStream, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { canPin } from './stub/pinning.js';
import { startStreamingStub, stopStreamingStub } from './stub/start-streaming-stub.js';
import type { FloorClientFigures } from './floor-client.js';
import { rateAndCv } from './arrival-figures.js';
import { runFloorPacer, type FloorFigures } from './floor-pacer.js';

const SCALE = Number(process.env['BENCH_SCALE'] ?? 1);
const PHASES = (process.env['BENCH_PHASES'] ?? 'cpu,rate,memory,transport').split(',');
const TOKENS = 16;
const CLOCK_TICKS_PER_S = 100;
const SAMPLE_INTERVAL_MS = 5;
const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const FLOOR_CLIENT = fileURLToPath(new URL('./floor-client.js', import.meta.url));

interface Sample {
  epochMs: number;
  cpuS: number;
  rssBytes: number;
}

interface CliRun {
  samples: Sample[];
  /** Stub-seen arrival instants of the measured requests, epoch ms, in order. */
  arrivalsMs: Float64Array;
  lastAnswerEndMs: number;
  /** The CLI process's whole CPU (user + system, all threads) from the shell's `times`. */
  totalCpuS: number;
  scheduledS: Float64Array;
  lagsMs: Float64Array;
  /** The largest send lag among requests scheduled after the first second: the run without its start. */
  lagMaxAfterFirstSecondMs: number;
  failed: number;
  /** Failed requests by error class, as text. */
  errors: string;
  exitCode: number;
}

function readProcess(pid: number): Sample | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpuS = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
    const rssPages = Number(fields[21]);
    return { epochMs: performance.timeOrigin + performance.now(), cpuS, rssBytes: rssPages * 4096 };
  } catch {
    return undefined;
  }
}

/** The value of a sampled quantity at `epochMs`, interpolated between the two samples around it. */
function at(samples: readonly Sample[], epochMs: number, pick: (sample: Sample) => number): number {
  let index = samples.findIndex((sample) => sample.epochMs >= epochMs);
  if (index < 0) return pick(samples[samples.length - 1] as Sample);
  if (index === 0) return pick(samples[0] as Sample);
  const after = samples[index] as Sample;
  const before = samples[--index] as Sample;
  const fraction = (epochMs - before.epochMs) / Math.max(after.epochMs - before.epochMs, 1e-9);
  return pick(before) + (pick(after) - pick(before)) * fraction;
}

/** The CPU in the shell's `times` output: its second line is the children's user and system time. */
function childrenCpuS(timesOutput: string): number {
  const lines = timesOutput.trim().split('\n');
  const seconds = (text: string): number => {
    const match = /(\d+)m([\d.]+)s/.exec(text);
    return match === null ? Number.NaN : Number(match[1]) * 60 + Number(match[2]);
  };
  const [user, system] = (lines[lines.length - 1] ?? '').trim().split(/\s+/);
  return seconds(user ?? '') + seconds(system ?? '');
}

async function readRecords(path: string): Promise<{ scheduledS: Float64Array; lagsMs: Float64Array; lagMaxAfterFirstSecondMs: number; failed: number; errors: string }> {
  const scheduled: number[] = [];
  const lags: number[] = [];
  let lagMaxAfterFirstSecondMs = 0;
  let failed = 0;
  const errors = new Map<string, number>();
  for await (const line of createInterface({ input: createReadStream(path) })) {
    if (line.trim() === '') continue;
    const record = JSON.parse(line) as Record<string, unknown>;
    if (record['warmup'] === true) continue;
    const scheduledTime = record['scheduled_time'] as number;
    scheduled.push(scheduledTime);
    if (typeof record['arrival_time'] === 'number') {
      const lagMs = (record['arrival_time'] - scheduledTime) * 1000;
      lags.push(lagMs);
      // scheduled_time counts from t0, the schedule's start.
      if (scheduledTime >= 1) lagMaxAfterFirstSecondMs = Math.max(lagMaxAfterFirstSecondMs, lagMs);
    }
    if (record['success'] !== true) {
      failed++;
      const error = String(record['error']);
      errors.set(error, (errors.get(error) ?? 0) + 1);
    }
  }
  const errorText = [...errors].map(([error, count]) => `${count} ${error}`).join(', ');
  return { scheduledS: Float64Array.from(scheduled).sort(), lagsMs: Float64Array.from(lags).sort(), lagMaxAfterFirstSecondMs, failed, errors: errorText === '' ? '' : ` (${errorText})` };
}

/** Moves this process (all its threads) to one CPU: CPU 1 beside the stub while the CLI runs, CPU 0 for the floor. */
function pinSelf(pinned: boolean, cpu: number): void {
  if (pinned) execFileSync('taskset', ['-a', '-cp', String(cpu), String(process.pid)], { stdio: 'ignore' });
}

async function floorOf(pinned: boolean, scheduledS: Float64Array): Promise<FloorFigures> {
  pinSelf(pinned, 0);
  try {
    return await runFloorPacer(Float64Array.from(scheduledS, (instant) => (instant - (scheduledS[0] as number)) * 1000));
  } finally {
    pinSelf(pinned, 1);
  }
}

/** The bare Node client (floor-client.ts) on the CLI's core, following the run's schedule against a fresh stub. */
async function runFloorClient(pinned: boolean, scheduledS: Float64Array, directory: string): Promise<FloorClientFigures> {
  const scheduleFile = join(directory, 'floor-client-schedule.txt');
  writeFileSync(scheduleFile, `${Array.from(scheduledS, (instant) => ((instant - (scheduledS[0] as number)) * 1000).toFixed(3)).join('\n')}\n`);
  const { child: stub, baseUrl } = await startStreamingStub(pinned);
  try {
    const command = pinned ? 'taskset' : process.execPath;
    const args = pinned ? ['-c', '0', process.execPath, FLOOR_CLIENT, baseUrl, scheduleFile] : [FLOOR_CLIENT, baseUrl, scheduleFile];
    const output = execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 120_000 });
    return JSON.parse(output.trim().split('\n').pop() ?? '') as FloorClientFigures;
  } finally {
    await stopStreamingStub(stub);
  }
}

async function runCli(pinned: boolean, rate: number, count: number, directory: string, name: string, extraArgs: readonly string[] = []): Promise<CliRun> {
  const arrivalsFile = join(directory, `${name}-arrivals.txt`);
  const outputDir = join(directory, name);
  const { child: stub, baseUrl } = await startStreamingStub(pinned, arrivalsFile);
  const cliArgs = [
    CLI, 'node', '--target', 'attach', '--url', baseUrl, '--request-rate', String(rate), '--num-prompts', String(count),
    '--random-input-len', '32', '--random-output-len', String(TOKENS), '--random-range-ratio', '1', '--seed', '1',
    '--output-dir', outputDir, '--progress', 'off', '--quiet', ...extraArgs,
  ];
  const quoted = [process.execPath, ...cliArgs].map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(' ');
  const pin = pinned ? 'taskset -c 0 ' : '';
  // The shell starts the CLI, says its pid, waits for it and prints its children's CPU (`times`).
  const shell = spawn('bash', ['-c', `${pin}${quoted} >&2 & echo PID $!; wait $!; code=$?; times; echo EXIT $code`], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  const samples: Sample[] = [];
  let timer: NodeJS.Timeout | undefined;
  shell.stdout.on('data', (data: Buffer) => {
    output += data.toString();
    const match = /PID (\d+)/.exec(output);
    if (match !== null && timer === undefined) {
      const pid = Number(match[1]);
      timer = setInterval(() => {
        const sample = readProcess(pid);
        if (sample !== undefined) samples.push(sample);
      }, SAMPLE_INTERVAL_MS);
    }
  });
  await new Promise<void>((resolve) => shell.once('exit', () => resolve()));
  clearInterval(timer);
  await stopStreamingStub(stub);
  const exitCode = Number(/EXIT (\d+)/.exec(output)?.[1] ?? -1);
  const timesOutput = output.slice(output.indexOf('\n', output.indexOf('PID')) + 1, output.indexOf('EXIT'));
  const arrivalLines = readFileSync(arrivalsFile, 'utf8').trim().split('\n');
  const endLine = arrivalLines.pop() ?? '';
  const records = await readRecords(join(outputDir, 'requests.jsonl'));
  return {
    samples,
    arrivalsMs: Float64Array.from(arrivalLines.map(Number)).sort(),
    lastAnswerEndMs: Number(endLine.replace('END ', '')),
    totalCpuS: childrenCpuS(timesOutput),
    ...records,
    exitCode,
  };
}

function quantile(sorted: Float64Array, fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * (sorted.length - 1)))] as number;
}

function row(name: string, value: string, target: string, met: boolean | undefined, baseline: string): void {
  const verdict = met === undefined ? '' : met ? 'met' : 'MISSED';
  console.log(`  ${name.padEnd(44)} ${value.padStart(14)}   target ${target.padEnd(14)} ${verdict.padEnd(7)} ${baseline}`);
}

function floorText(floor: FloorFigures, pick: (figures: FloorFigures) => string): string {
  return `floor pacer ${pick(floor)}`;
}

/** The CLI's CPU between the stub's first and last measured arrival, in all and per request (interpolated samples). */
function cpuWhileArrivalsRun(run: CliRun): { seconds: number; perRequestUs: number; arrivalsSpanS: number } {
  const firstMs = run.arrivalsMs[0] as number;
  const lastMs = run.arrivalsMs[run.arrivalsMs.length - 1] as number;
  const seconds = at(run.samples, lastMs, (sample) => sample.cpuS) - at(run.samples, firstMs, (sample) => sample.cpuS);
  return { seconds, perRequestUs: (seconds / (run.arrivalsMs.length - 1)) * 1e6, arrivalsSpanS: (lastMs - firstMs) / 1000 };
}

async function cpuPhase(pinned: boolean, directory: string): Promise<void> {
  const count = Math.round(10_000 * SCALE);
  console.log(`\n1,000 req/s Poisson, ${count} requests of ${TOKENS} streamed tokens: servelab node --target attach`);
  const run = await runCli(pinned, 1000, count, directory, 'rate-1000');
  const floor = await floorOf(pinned, run.scheduledS);
  const bareClient = await runFloorClient(pinned, run.scheduledS, directory);
  const arrivals = run.arrivalsMs;
  const cpu = cpuWhileArrivalsRun(run);
  const writeCpuS = run.totalCpuS - at(run.samples, run.lastAnswerEndMs, (sample) => sample.cpuS);
  const server = rateAndCv(arrivals, 1000);
  const schedule = rateAndCv(run.scheduledS, 1);
  const lagP99 = quantile(run.lagsMs, 0.99);
  const lagMax = run.lagsMs[run.lagsMs.length - 1] as number;
  console.log(`  exit code ${run.exitCode}; ${arrivals.length} measured requests reached the stub; ${run.failed} failed${run.errors}; whole CLI process CPU ${run.totalCpuS.toFixed(2)} s`);
  row('client CPU per request while arrivals run', `${cpu.perRequestUs.toFixed(1)} µs`, '≤ 100 µs', cpu.perRequestUs <= 100, `bare Node client ${bareClient.cpuPerRequestUs.toFixed(1)} µs (${bareClient.readsPerAnswer.toFixed(1)} reads per answer); ${cpu.seconds.toFixed(2)} s over ${cpu.arrivalsSpanS.toFixed(1)} s of arrivals`);
  row('inter-arrival CV as the server sees it', server.cv.toFixed(3), '0.97–1.03', server.cv >= 0.97 && server.cv <= 1.03, `schedule ${schedule.cv.toFixed(3)}; ${floorText(floor, (f) => f.cv.toFixed(3))}`);
  row('achieved rate at the server / schedule', (server.rate / schedule.rate).toFixed(4), '1 ± 0.01', Math.abs(server.rate / schedule.rate - 1) <= 0.01, `${server.rate.toFixed(1)} of ${schedule.rate.toFixed(1)} req/s`);
  row('send lag p99', `${lagP99.toFixed(3)} ms`, '< 1 ms', lagP99 < 1, floorText(floor, (f) => `${f.lagP99Ms.toFixed(3)} ms`));
  row('send lag max', `${lagMax.toFixed(3)} ms`, '< 50 ms', lagMax < 50, floorText(floor, (f) => `${f.lagMaxMs.toFixed(3)} ms`));
  row('CPU after the last answer (analysis, files, exit)', `${writeCpuS.toFixed(2)} s`, '≤ 1 s', writeCpuS <= 1, '');
}

async function ratePhase(pinned: boolean, directory: string): Promise<void> {
  const count = Math.round(25_000 * SCALE);
  console.log(`\n5,000 req/s Poisson, ${count} requests: servelab node --target attach`);
  const run = await runCli(pinned, 5000, count, directory, 'rate-5000');
  const floor = await floorOf(pinned, run.scheduledS);
  const bareClient = await runFloorClient(pinned, run.scheduledS, directory);
  const server = rateAndCv(run.arrivalsMs, 1000);
  const schedule = rateAndCv(run.scheduledS, 1);
  const lagMax = run.lagsMs[run.lagsMs.length - 1] as number;
  const cpu = cpuWhileArrivalsRun(run);
  console.log(`  exit code ${run.exitCode}; ${run.arrivalsMs.length} measured requests reached the stub; ${run.failed} failed${run.errors}`);
  // No target of its own: it says whether one core can carry this rate at all (rate × CPU per request < 1 s a second).
  row('client CPU per request while arrivals run', `${cpu.perRequestUs.toFixed(1)} µs`, '', undefined, `bare Node client ${bareClient.cpuPerRequestUs.toFixed(1)} µs: ${((5000 * cpu.perRequestUs) / 1e6).toFixed(2)} vs ${((5000 * bareClient.cpuPerRequestUs) / 1e6).toFixed(2)} cores at 5,000 req/s`);
  row('achieved rate at the server / schedule', (server.rate / schedule.rate).toFixed(4), '1 ± 0.01', Math.abs(server.rate / schedule.rate - 1) <= 0.01, `${server.rate.toFixed(1)} of ${schedule.rate.toFixed(1)} req/s; ${floorText(floor, (f) => (f.rate / schedule.rate).toFixed(4))}`);
  row('inter-arrival CV as the server sees it', server.cv.toFixed(3), '≤ 1.10', server.cv <= 1.1, `schedule ${schedule.cv.toFixed(3)}; ${floorText(floor, (f) => f.cv.toFixed(3))}`);
  row('send lag p99', `${quantile(run.lagsMs, 0.99).toFixed(3)} ms`, '', undefined, floorText(floor, (f) => `${f.lagP99Ms.toFixed(3)} ms`));
  row('send lag max', `${lagMax.toFixed(3)} ms`, '< 50 ms', lagMax < 50, floorText(floor, (f) => `${f.lagMaxMs.toFixed(3)} ms`));
  // No target: it tells a start-up transient (the client's code still cold while the rate is already high) from a
  // client that cannot keep up.
  row('send lag max after the first second', `${run.lagMaxAfterFirstSecondMs.toFixed(3)} ms`, '', undefined, '');
}

/**
 * The HTTP client under the CLI, chosen by `--http-transport`: servelab's socket pool (src/clients/common/socket-pool.ts)
 * against undici's `Pool`, on the same schedule (same seed) and core, alternating socket, undici, undici, socket, ...
 * over BENCH_ROUNDS rounds (default 3) so drift of the machine falls on both alike. The median of each side's CPU per
 * request while arrivals run is compared; the bare Node client is the floor under both.
 */
async function transportPhase(pinned: boolean, directory: string): Promise<void> {
  const count = Math.round(10_000 * SCALE);
  const rounds = Number(process.env['BENCH_ROUNDS'] ?? 3);
  console.log(`\n--http-transport socket vs undici: 1,000 req/s Poisson, ${count} requests of ${TOKENS} streamed tokens each run, ${rounds} rounds`);
  const perRequestUs: Record<'socket' | 'undici', number[]> = { socket: [], undici: [] };
  let scheduledS: Float64Array | undefined;
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? (['socket', 'undici'] as const) : (['undici', 'socket'] as const);
    for (const transport of order) {
      const run = await runCli(pinned, 1000, count, directory, `transport-${transport}-${round}`, ['--http-transport', transport]);
      scheduledS ??= run.scheduledS;
      const cpu = cpuWhileArrivalsRun(run);
      perRequestUs[transport].push(cpu.perRequestUs);
      console.log(`  round ${round + 1} ${transport.padEnd(6)} ${cpu.perRequestUs.toFixed(1).padStart(7)} µs CPU per request; exit code ${run.exitCode}; ${run.arrivalsMs.length} measured requests reached the stub; ${run.failed} failed${run.errors}`);
    }
  }
  const bareClient = await runFloorClient(pinned, scheduledS as Float64Array, directory);
  const middle = (values: number[]): number => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted.length % 2 === 1 ? (sorted[(sorted.length - 1) / 2] as number) : ((sorted[sorted.length / 2 - 1] as number) + (sorted[sorted.length / 2] as number)) / 2;
  };
  const socketUs = middle(perRequestUs.socket);
  const undiciUs = middle(perRequestUs.undici);
  const spread = (values: number[]): string => `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}`;
  row('socket pool: CPU per request (median)', `${socketUs.toFixed(1)} µs`, '', undefined, `runs ${spread(perRequestUs.socket)} µs`);
  row('undici Pool: CPU per request (median)', `${undiciUs.toFixed(1)} µs`, '', undefined, `runs ${spread(perRequestUs.undici)} µs`);
  row('undici / socket', (undiciUs / socketUs).toFixed(3), '', undefined, `above the bare Node client (${bareClient.cpuPerRequestUs.toFixed(1)} µs): socket ${(socketUs - bareClient.cpuPerRequestUs).toFixed(1)} µs, undici ${(undiciUs - bareClient.cpuPerRequestUs).toFixed(1)} µs`);
}

async function memoryPhase(pinned: boolean, directory: string): Promise<void> {
  const count = Math.round(200_000 * SCALE);
  const rate = 5000;
  console.log(`\nmemory: ${count} requests at ${rate} req/s: servelab node --target attach`);
  const run = await runCli(pinned, rate, count, directory, 'memory');
  const firstMs = run.arrivalsMs[0] as number;
  const rssStart = at(run.samples, firstMs, (sample) => sample.rssBytes);
  const rssEnd = at(run.samples, run.lastAnswerEndMs, (sample) => sample.rssBytes);
  const gapBytes = (TOKENS - 1) * 8;
  const perRequest = (rssEnd - rssStart) / count;
  console.log(`  exit code ${run.exitCode}; ${run.failed} failed${run.errors}; RSS ${(rssStart / 2 ** 20).toFixed(0)} MiB at the first arrival, ${(rssEnd / 2 ** 20).toFixed(0)} MiB after the last answer`);
  row('RSS growth per finished request', `${perRequest.toFixed(0)} B`, `< ${300 + gapBytes} B`, perRequest < 300 + gapBytes, `(300 B + ${TOKENS - 1} per-token gaps × 8 B)`);
}

async function main(): Promise<void> {
  const pinned = canPin();
  pinSelf(pinned, 1);
  console.log(pinned ? 'CLI pinned to CPU 0, stub to CPU 1' : 'CLI and stub are not pinned (no taskset, or BENCH_PIN=0)');
  const load = loadavg()[0] as number;
  console.log(`load average before the run: ${load.toFixed(2)}${load > 0.5 ? ' (a busy machine: the figures include other processes\' interference)' : ''}`);
  console.log("SGLang's client (bench_serving) as a baseline: not installable here (no PyPI); the same-run baselines are the floor pacer (pacing) and the bare Node client (CPU)");
  const directory = await mkdtemp(join(tmpdir(), 'servelab-bench-cli-'));
  try {
    if (PHASES.includes('cpu')) await cpuPhase(pinned, directory);
    if (PHASES.includes('rate')) await ratePhase(pinned, directory);
    if (PHASES.includes('memory')) await memoryPhase(pinned, directory);
    if (PHASES.includes('transport')) await transportPhase(pinned, directory);
  } finally {
    if (process.env['BENCH_KEEP'] === '1') console.log(`run directories kept in ${directory}`);
    else await rm(directory, { recursive: true, force: true });
  }
}

await main();
